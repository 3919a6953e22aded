import { startRedis, type TestRedis } from '../support/redis.js';
import { Resources, sleep } from './_helpers.js';

let redis: TestRedis;
const res = new Resources(() => redis);
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(() => res.closeAll());
afterAll(async () => {
  await redis.stop();
});

const zero = { stalled: 0, deadLettered: 0, promoted: 0, completedRemoved: 0, dedupForgotten: 0 };

describe('sweep', () => {
  test('on an empty queue: all zero', async () => {
    const q = res.queue();
    expect(await q.sweep()).toEqual(zero);
  });

  test('an expired lease goes back to pending with failures + 1; attempt 2 on re-lease', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 3 });
    const [l] = await q.lease({ leaseMs: 100 });
    expect(await q.sweep()).toEqual(zero); // not expired yet
    await sleep(150);
    expect(await q.sweep()).toEqual({ ...zero, stalled: 1 });
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 1, lastError: 'lease expired' });
    expect(await q.sweep()).toEqual(zero); // nothing twice
    const [again] = await q.lease({ leaseMs: 5000 });
    expect(again!.job).toMatchObject({ id, attempt: 2, lastError: 'lease expired' });
    expect(again!.token).not.toBe(l!.token);
    expect(await q.ack(again!)).toBe(true);
  });

  test('an expired lease past the attempt limit is dead-lettered', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 2 });
    for (let i = 1; i <= 2; i++) {
      const [l] = await q.lease({ leaseMs: 50 });
      expect(l!.job.attempt).toBe(i);
      await sleep(80);
      expect(await q.sweep()).toEqual({ ...zero, stalled: 1, deadLettered: i === 2 ? 1 : 0 });
    }
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', failures: 2, lastError: 'lease expired' });
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, dead: 1 });
  });

  test('live leases are left alone', async () => {
    const q = res.queue<string>();
    await q.addBulk([{ data: 'short' }, { data: 'long', opts: { leaseMs: 10_000 } }]);
    await q.lease({ count: 2, leaseMs: 50 });
    await sleep(80);
    expect((await q.sweep()).stalled).toBe(1);
    expect(await q.counts()).toMatchObject({ pending: 1, working: 1 });
  });

  test('bounded by limit per call: stalled, promoted and retention', async () => {
    const q = res.queue<number>();
    await q.addBulk([0, 1, 2, 3, 4].map((data) => ({ data })));
    await q.lease({ count: 5, leaseMs: 50 });
    await q.addBulk([5, 6, 7, 8, 9].map((data) => ({ data, opts: { delayMs: 50 } })));
    await sleep(100);
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 2, promoted: 2 });
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 2, promoted: 2 });
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 1, promoted: 1 });
    expect(await q.sweep({ limit: 2 })).toEqual(zero);
    expect(await q.counts()).toMatchObject({ pending: 10, working: 0, delayed: 0 });

    const leases = await q.lease({ count: 10 });
    for (const l of leases) await q.ack(l); // default retention: kept
    const r = res.queue<number>('r', { defaults: { keepCompletedMs: 50 } });
    await r.addBulk([0, 1, 2].map((data) => ({ data })));
    await r.ackBatch(await r.lease({ count: 3 }));
    await sleep(80);
    expect((await r.sweep({ limit: 2 })).completedRemoved).toBe(2);
    expect((await r.sweep({ limit: 2 })).completedRemoved).toBe(1);
    expect((await r.counts()).completed).toBe(0);
  });

  test('5 concurrent sweeps from 5 connections: counts add up, nothing duplicated', async () => {
    const q = res.queue<number>();
    const n = 60;
    await q.addBulk(Array.from({ length: n }, (_, data) => ({ data, opts: { attempts: 5 } })));
    const first = await q.lease({ count: n, leaseMs: 50 });
    expect(first).toHaveLength(n);
    await sleep(100);
    const sweepers = [q, ...Array.from({ length: 4 }, () => res.twin<number>(q))];
    await Promise.all(sweepers.map((s) => s.client.ping()));
    // capacity 5 x 10 = 50 < 60: the sum must be exactly 50 and the rest still expired
    const round1 = await Promise.all(sweepers.map((s) => s.sweep({ limit: 10 })));
    expect(round1.reduce((a, r) => a + r.stalled, 0)).toBe(50);
    const round2 = await Promise.all(sweepers.map((s) => s.sweep({ limit: 10 })));
    expect(round2.reduce((a, r) => a + r.stalled, 0)).toBe(10);
    expect(await q.counts()).toMatchObject({ pending: n, working: 0, dead: 0 });
    const obs = res.client();
    expect(await obs.llen(q.keys.byName.pending)).toBe(n);
    const again = await q.lease({ count: 1000 });
    const ids = again.map((l) => l.job.id);
    expect(new Set(ids).size).toBe(n);
    expect(ids.sort()).toEqual(first.map((l) => l.job.id).sort());
    expect(again.every((l) => l.job.attempt === 2)).toBe(true);
  });

  test('one job the scripts cannot decode does not orphan the other expired jobs of the same sweep', async () => {
    // A job name with a lone surrogate is stored by JSON.stringify as "\ud800", which
    // Redis' cjson cannot decode. If add() refuses such a name, there is nothing to check.
    const q = res.queue<string>();
    const poison = await q.add('poison', { name: 'x \ud800' }).catch((err: unknown) => err);
    if (poison instanceof Error) return;
    await q.add('good-1');
    await q.add('good-2');
    await q.lease({ count: 3, leaseMs: 30 });
    await sleep(60);
    await q.sweep().catch(() => undefined);
    const again = await q.lease({ count: 10 });
    expect(again.map((l) => l.job.data).sort()).toEqual(expect.arrayContaining(['good-1', 'good-2']));
  });

  test('rejects bad options', async () => {
    const q = res.queue();
    await expect(q.sweep({ limit: 0 })).rejects.toThrow(/limit/);
    await expect(q.sweep({ limit: 1.5 })).rejects.toThrow(/limit/);
    await expect(q.sweep({ max: 1 } as never)).rejects.toThrow(/unknown option/);
  });
});
