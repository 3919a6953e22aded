import type { Redis } from 'ioredis';
import { Worker, type Queue } from '../../lib/index.js';
import { useRedis, blockedClients, commandStats, scriptCalls, sleep, statsDelta, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/**
 * Waits until a consumer of `q` has taken every wake-up token and blocks on Redis again: it
 * has looked at the queue since the last add and found nothing it may lease.
 */
async function parked(obs: Redis, q: Queue<any, any>): Promise<void> {
  await waitUntil(
    async () => (await obs.llen(q.keys.byName.wake)) === 0 && (await blockedClients(obs)) === 1,
    'the consumer blocked on Redis with the wake-ups taken',
    10_000,
  );
}

describe('pause / resume', () => {
  test('while paused lease returns nothing and adds go on; after resume it leases', async () => {
    const q = res.queue<string>();
    await q.add('before');
    await q.pause();
    await q.add('during');
    expect(await q.lease({ count: 10 })).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 2, paused: true });
    await q.resume();
    expect((await q.lease({ count: 10 })).map((l) => l.job.data)).toEqual(['before', 'during']);
  });

  test('a pause from another connection applies to every leaser of the queue', async () => {
    const q = res.queue<string>();
    const admin = res.twin<string>(q);
    await q.add('x');
    await admin.pause();
    expect(await q.lease()).toEqual([]);
    await admin.resume();
    expect(await q.lease()).toHaveLength(1);
  });

  test('a blocked lease stays empty while paused and wakes on resume', async () => {
    const q = res.queue<string>();
    const admin = res.twin<string>(q);
    const obs = res.client();
    await admin.pause();
    await admin.add('x');
    let settled = false;
    const pending = q.lease({ blockMs: 15_000 }).finally(() => (settled = true));
    await parked(obs, q);
    await sleep(400); // and it stays so
    expect(settled).toBe(false);
    const tResume = Date.now();
    await admin.resume();
    const leases = await pending;
    expect(leases.map((l) => l.job.data)).toEqual(['x']);
    expect(Date.now() - tResume).toBeLessThan(5000); // woken by the resume, not at the end of its 15 s block
  });

  test('a blocked lease of a paused queue with an overdue delayed job waits, not polls', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.pause();
    await q.add('later', { delayMs: 50 });
    await sleep(150); // due now, and not promoted: nothing leases a paused queue
    const before = await commandStats(obs);
    const t0 = Date.now();
    expect(await q.lease({ blockMs: 1500 })).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    // a wait on the wake-up list (a resume, an add) instead of a lease call every millisecond
    expect(scriptCalls(statsDelta(before, await commandStats(obs)))).toBeLessThanOrEqual(3);
    await q.resume();
    expect((await q.lease({ blockMs: 5000 })).map((l) => l.job.data)).toEqual(['later']);
  });

  test('settling goes on while paused', async () => {
    const q = res.queue<string>();
    await q.add('x');
    const [l] = await q.lease();
    await q.pause();
    expect(await q.ack(l!)).toBe(true);
    expect(await q.touch(l!)).toBe(false);
  });

  test('a Worker stops taking jobs while paused and resumes promptly', async () => {
    const q = res.queue<number>();
    const admin = res.twin<number>(q);
    const obs = res.client();
    const seen: number[] = [];
    res.worker(new Worker<number>(q, async (job) => void seen.push(job.data), { blockMs: 15_000 }));
    await q.add(1);
    await waitUntil(() => seen.length === 1, 'first job', 10_000);
    await admin.pause();
    await admin.add(2);
    await parked(obs, q); // woken by the add, it found the queue paused
    await sleep(400); // and it stays so
    expect(seen).toEqual([1]);
    const t = Date.now();
    await admin.resume();
    await waitUntil(() => seen.length === 2, 'job after resume', 10_000);
    expect(Date.now() - t).toBeLessThan(5000); // woken by the resume, not at the end of its 15 s block
  });
});
