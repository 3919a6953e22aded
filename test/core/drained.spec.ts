/**
 * 'drained' (BullMQ's): the queue event a lease call publishes when it took the last pending
 * jobs (only while someone listens), and the Worker's own event when a lease call finds
 * fewer jobs than the worker has room for.
 */
import { Worker, type QueueEvent } from '../../lib/index.js';
import { commandStats, eventsReady, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

test('a lease call that takes the last pending jobs publishes drained once; delayed jobs do not count', async () => {
  const q = res.queue<string>();
  const got: QueueEvent[] = [];
  const sub = res.twin<string>(q).events().subscribe((e) => got.push(e));
  try {
    await eventsReady(res.client(), q);
    await q.add('later', { delayMs: 60_000 });
    const leased: string[] = [];
    /** Leases `count`; whether that call published drained (seen before a marker added after it). */
    const leaseAndSee = async (count: number): Promise<boolean> => {
      const before = got.length;
      leased.push(...(await q.lease({ count })).map((l) => l.job.id));
      const marker = `m${leased.length}-${before}`;
      await q.add('marker', { jobId: marker, delayMs: 60_000 }); // delayed: leaves the pending jobs as they are
      await waitUntil(() => got.some((e) => e.id === marker), 'the marker');
      return got.slice(before).some((e) => e.type === 'drained');
    };
    for (const id of ['a', 'b', 'c']) await q.add(id, { jobId: id });
    expect(await leaseAndSee(2)).toBe(false);
    expect(await leaseAndSee(2)).toBe(true); // one left for two: a short take
    expect(await leaseAndSee(2)).toBe(false); // nothing to lease: nothing drained
    await q.add('d', { jobId: 'd' });
    await q.add('e', { jobId: 'e', priority: 3 });
    expect(await leaseAndSee(1)).toBe(false);
    expect(await leaseAndSee(1)).toBe(true); // exactly the last one
    await q.add('f', { jobId: 'f', priority: -2 });
    expect(await leaseAndSee(1)).toBe(true); // the prioritized set emptied
    await q.add('g1', { jobId: 'g1', group: 'g' });
    await q.add('g2', { jobId: 'g2', group: 'g' });
    expect(await leaseAndSee(1)).toBe(false); // a grouped job still waits
    expect(await leaseAndSee(1)).toBe(true);
    expect(leased).toEqual(['a', 'b', 'c', 'e', 'd', 'f', 'g1', 'g2']);
    expect(got.filter((e) => e.type === 'drained')).toEqual([
      { type: 'drained', queue: q.name },
      { type: 'drained', queue: q.name },
      { type: 'drained', queue: q.name },
      { type: 'drained', queue: q.name },
    ]);
  } finally {
    sub.unsubscribe();
  }
});

test('nobody listening: the lease call that drains the queue runs no command for it', async () => {
  const q = res.queue<string>();
  const obs = res.client();
  await q.add('a');
  await q.lease(); // scripts loaded
  await q.add('b');
  const before = await commandStats(obs);
  expect(await q.lease({ count: 2 })).toHaveLength(1);
  const delta = statsDelta(before, await commandStats(obs));
  delete delta.info;
  // the lease call's own commands, none of them the drained check's (LLEN, ZCARD, HGET)
  expect(delta).toEqual({ fcall: 1, time: 1, hmget: 2, get: 1, lpop: 1, hset: 1, zadd: 1, set: 1, exists: 1 });
});

test("a Worker reports drained when a lease finds fewer jobs than it has room for, once until it leases again", async () => {
  const q = res.queue<number>();
  const seen: string[] = [];
  const worker = res.worker(new Worker<number>(q, async () => undefined, { concurrency: 1, blockMs: 200, autostart: false }));
  worker.events.subscribe((e) => seen.push(e.type));
  worker.start();
  await waitUntil(() => seen.includes('drained'), 'drained on an empty queue');
  await q.addBulk([{ data: 1 }, { data: 2 }]);
  await waitUntil(() => seen.filter((t) => t === 'drained').length === 2, 'drained after the two jobs');
  expect(seen).toEqual(['drained', 'completed', 'completed', 'drained']);
});
