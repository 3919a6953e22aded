/**
 * Large batches inside the documented limits: addBulk has no size limit, sweep accepts
 * limit up to 100,000, listDead / retryDead / purgeDead up to 10,000.
 */
import type { Queue } from '../../lib/index.js';
import { useRedis, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

const N = 10_000;

/** N jobs with attempts 1 whose short leases have run out (not swept yet). */
async function expiredLeases(q: Queue<number>): Promise<void> {
  for (let i = 0; i < N; i += 2000) {
    await q.addBulk(Array.from({ length: 2000 }, (_, j) => ({ data: i + j, opts: { attempts: 1 } })));
  }
  let last = 0;
  for (let i = 0; i < N; i += 1000) {
    for (const l of await q.lease({ count: 1000, leaseMs: 30 })) last = Math.max(last, l.deadline);
  }
  await untilRedisTime(res.client(), last, 'the leases to run out');
}

/** N dead letters, made in chunks the engine handles. */
async function deadLetters(q: Queue<number>): Promise<void> {
  await expiredLeases(q);
  let dead = 0;
  while (dead < N) dead += (await q.sweep({ limit: 1000 })).deadLettered;
}

describe('large batches', () => {
  test('addBulk of 10,000 jobs in one call', async () => {
    const q = res.queue<number>();
    const out = await q.addBulk(Array.from({ length: N }, (_, data) => ({ data })));
    expect(out).toHaveLength(N);
    expect(out.every((r) => r.created)).toBe(true);
    expect((await q.counts()).pending).toBe(N);
  });

  test('sweep({ limit: 10,000 }) over 10,000 expired leases', async () => {
    const q = res.queue<number>();
    await expiredLeases(q);
    const r = await q.sweep({ limit: N });
    expect(r.stalled).toBe(N);
    expect(r.deadLettered).toBe(N);
  });

  test('listDead({ limit: 10,000 })', async () => {
    const q = res.queue<number>();
    await deadLetters(q);
    expect(await q.listDead({ limit: N })).toHaveLength(N);
  });

  test('retryDead({ limit: 10,000 })', async () => {
    const q = res.queue<number>();
    await deadLetters(q);
    expect(await q.retryDead({ limit: N })).toHaveLength(N);
    expect((await q.counts()).pending).toBe(N);
  });

  test('purgeDead({ limit: 10,000 })', async () => {
    const q = res.queue<number>();
    await deadLetters(q);
    expect(await q.purgeDead({ limit: N })).toHaveLength(N);
    expect((await q.counts()).dead).toBe(0);
  });
});
