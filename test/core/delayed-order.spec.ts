/**
 * Delayed jobs due in the same millisecond become pending in the order they were added
 * (FIFO within a priority), whatever their ids: generated ids, whose base-36 counter does not
 * sort in add order, and custom ids in any order. Also past the most jobs one call promotes,
 * and after some of them left by hand (remove, promote).
 */
import type { Queue } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis } from '../support/engine-harness.js';
import { booksAgree } from '../support/job-indexes.js';

const res = useRedis();

/** A due time far enough ahead for the adds to land before it: now + 400 ms on the Redis clock. */
async function dueSoon(): Promise<number> {
  return (await redisNow(res.client())) + 400;
}

/** Waits for `at`, then leases everything, in lease order (calls of up to 1000, as a worker's). */
async function leaseAllAfter(q: Queue<number>, at: number): Promise<number[]> {
  await untilRedisTime(res.client(), at);
  const out: number[] = [];
  for (;;) {
    const batch = await q.lease({ count: 1000 });
    if (batch.length === 0) return out;
    out.push(...batch.map((l) => l.job.data));
  }
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('one addBulk of 40 jobs with one delayMs runs in add order (generated ids)', async () => {
  const q = res.queue<number>('bulk');
  await q.addBulk(range(40).map((i) => ({ data: i, opts: { delayMs: 400 } })));
  const at = (await redisNow(res.client())) + 400;
  expect(await leaseAllAfter(q, at)).toEqual(range(40));
});

test('custom ids in any order, added one by one for one runAt, run in add order', async () => {
  const q = res.queue<number>('custom');
  const at = await dueSoon();
  const ids = ['zeta', 'job-10', 'alpha', 'job-2', '9', '10', 'b', 'a'];
  for (const [i, id] of ids.entries()) await q.add(i, { jobId: id, runAt: at });
  expect(await leaseAllAfter(q, at)).toEqual(range(ids.length));
  await booksAgree(res.client(), q);
});

test('past the most jobs one lease call promotes: 2,500 jobs due together keep their add order', async () => {
  const q = res.queue<number>('many');
  const at = await dueSoon();
  // ids that sort in reverse add order, in two calls, so that both the set's order and one call's batch are wrong guides
  const id = (i: number) => `j${String(9999 - i).padStart(4, '0')}`;
  await q.addBulk(range(1200).map((i) => ({ data: i, opts: { jobId: id(i), runAt: at } })));
  await q.addBulk(range(1300).map((i) => ({ data: 1200 + i, opts: { jobId: id(1200 + i), runAt: at } })));
  expect(await leaseAllAfter(q, at)).toEqual(range(2500));
  expect(await res.client().exists(q.keys.derived.ties, q.keys.derived.tie(at))).toBe(0);
});

test('promoted by a sweep, in pages smaller than the tie: the same order', async () => {
  const q = res.queue<number>('sweep');
  const at = await dueSoon();
  await q.addBulk(range(30).map((i) => ({ data: i, opts: { jobId: `s${String(99 - i)}`, runAt: at } })));
  await untilRedisTime(res.client(), at);
  for (const promoted of [12, 12, 6]) expect((await q.sweep({ limit: 12 })).promoted).toBe(promoted);
  expect((await q.getJobs('pending')).map((j) => j.data)).toEqual(range(30));
});

test('FIFO within each priority; jobs due earlier first; jobs alone at their due time as before', async () => {
  const q = res.queue<number>('prio');
  const at = await dueSoon();
  // data: priority * 100 + add order, ids in reverse add order; one earlier job due alone
  await q.add(-1, { jobId: 'a', runAt: at - 100 });
  const jobs = [5, 0, 5, 0, -3, 5, -3, 0].map((p, i) => ({ data: p * 100 + i, opts: { jobId: `z${9 - i}`, priority: p, runAt: at } }));
  for (const j of jobs) await q.add(j.data, j.opts);
  const ran = await leaseAllAfter(q, at);
  expect(ran).toEqual([500 + 0, 500 + 2, 500 + 5, -1, 1, 3, 7, -300 + 4, -300 + 6]);
});

test('after remove and promote of some, the others still run in add order; drain and deleteQueue leave no tie list', async () => {
  const q = res.queue<number>('gaps');
  const obs = res.client();
  const at = await dueSoon();
  const id = (i: number) => `k${String(99 - i).padStart(2, '0')}`;
  for (const i of range(12)) await q.add(i, { jobId: id(i), runAt: at });
  expect(await q.remove(id(3))).toBe(true);
  expect(await q.remove(id(0))).toBe(true);
  expect(await q.promote(id(7))).toBe(true);
  await booksAgree(obs, q);
  const [first] = await q.lease();
  expect(first!.job.data).toBe(7);
  expect(await leaseAllAfter(q, at)).toEqual([1, 2, 4, 5, 6, 8, 9, 10, 11]);

  const later = (await redisNow(obs)) + 60_000;
  for (const i of range(3)) await q.add(i, { runAt: later });
  expect(await obs.exists(q.keys.derived.ties, q.keys.derived.tie(later))).toBe(2);
  expect(await q.drain()).toBe(3);
  expect(await obs.exists(q.keys.derived.ties, q.keys.derived.tie(later))).toBe(0);
  for (const i of range(3)) await q.add(i, { runAt: later });
  await q.deleteQueue();
  expect(await obs.exists(q.keys.derived.ties, q.keys.derived.tie(later))).toBe(0);
});
