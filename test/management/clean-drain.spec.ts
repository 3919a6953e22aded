/**
 * clean(state, { olderThanMs, limit }), the dead-letter filters of retryDead / purgeDead,
 * and drain().
 */
import type { Queue, QueueEvent } from '../../lib/index.js';
import { blockedClients, eventsReady, redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';

const res = useRedis();

/** Completes `ids` (added with jobId = data), in order. */
async function complete(q: Queue<string>, ids: string[]): Promise<void> {
  for (const id of ids) await q.add(id, { jobId: id });
  for (const id of ids) {
    const [l] = await q.lease();
    expect(l!.job.id).toBe(id);
    await q.ack(l!, id);
  }
}

/** Dead-letters `ids` (name: `names[i]`), in order. */
async function kill(q: Queue<string>, ids: string[], names: string[] = []): Promise<void> {
  for (const [i, id] of ids.entries()) {
    await q.add(id, { jobId: id, attempts: 1, name: names[i] ?? '' });
    await q.nack((await q.lease())[0]!, { error: 'x' });
  }
}

/** Waits `ms` on the Redis clock. */
async function redisSleep(ms: number): Promise<void> {
  const obs = res.client();
  await untilRedisTime(obs, (await redisNow(obs)) + ms);
}

describe('clean', () => {
  test('completed: those older than olderThanMs, at most limit, oldest first; idempotency windows stay', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await complete(q, ['c1', 'c2', 'c3']);
    await redisSleep(300);
    await complete(q, ['c4']);
    expect(await q.clean('completed', { olderThanMs: 200, limit: 2 })).toEqual(['c1', 'c2']);
    expect(await q.clean('completed', { olderThanMs: 200 })).toEqual(['c3']);
    expect(await q.clean('completed', { olderThanMs: 200 })).toEqual([]);
    expect((await q.getJobs('completed')).map((j) => j.id)).toEqual(['c4']);
    expect(await whereIs(obs, q, 'c1')).toEqual(['dedup']);
    expect((await q.add('again', { jobId: 'c1' })).created).toBe(false);
    expect(await q.clean('completed')).toEqual(['c4']);
  });

  test('dead: those that died olderThanMs ago, at most limit', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await kill(q, ['d1', 'd2', 'd3']);
    await redisSleep(300);
    await kill(q, ['d4']);
    expect(await q.clean('dead', { olderThanMs: 200, limit: 2 })).toEqual(['d1', 'd2']);
    expect(await q.clean('dead', { olderThanMs: 200, limit: 10 })).toEqual(['d3']);
    expect(await whereIs(obs, q, 'd1')).toEqual([]);
    expect((await q.listDead()).map((d) => d.id)).toEqual(['d4']);
    expect(await q.clean('dead')).toEqual(['d4']);
  });

  test("publishes 'cleaned' with the count and state, also for none; purgeDead does not", async () => {
    const q = res.queue<string>();
    const got: QueueEvent[] = [];
    const sub = res.twin<string>(q).events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      await complete(q, ['c1', 'c2']);
      await kill(q, ['d1', 'd2']);
      expect(await q.clean('completed')).toEqual(['c1', 'c2']);
      expect(await q.clean('dead', { limit: 1 })).toEqual(['d1']);
      expect(await q.clean('completed')).toEqual([]);
      expect(await q.purgeDead({ limit: 5 })).toEqual(['d2']);
      await q.add('marker', { jobId: 'marker' }); // its event comes after everything before it
      await waitUntil(() => got.some((e) => e.id === 'marker'), 'the marker');
      expect(got.filter((e) => e.type === 'cleaned').map(({ state, count }) => ({ state, count }))).toEqual([
        { state: 'completed', count: 2 },
        { state: 'dead', count: 1 },
        { state: 'completed', count: 0 },
      ]);
      expect(got.filter((e) => e.type === 'removed').map((e) => e.id)).toEqual(['c1', 'c2', 'd1', 'd2']);
    } finally {
      sub.unsubscribe();
    }
  });
});

describe('retryDead / purgeDead with a filter', () => {
  test('by name, by age, and limit', async () => {
    const q = res.queue<string>();
    await kill(q, ['a1', 'b1', 'a2'], ['a', 'b', 'a']);
    await redisSleep(300);
    await kill(q, ['a3', 'n1'], ['a', '']);
    expect(await q.retryDead({ name: 'a', olderThanMs: 200, limit: 10 })).toEqual(['a1', 'a2']);
    expect(await q.retryDead({ name: 'a', limit: 10 })).toEqual(['a3']);
    expect(await q.retryDead({ name: '', limit: 10 })).toEqual(['n1']); // jobs added without a name
    expect((await q.getJobs('pending')).map((j) => j.id)).toEqual(['a1', 'a2', 'a3', 'n1']);
    expect(await q.drain()).toBe(4);
    await kill(q, ['b2', 'b3'], ['b', 'b']);
    expect(await q.purgeDead({ name: 'b', limit: 2 })).toEqual(['b1', 'b2']);
    expect(await q.purgeDead({ olderThanMs: 60_000, limit: 10 })).toEqual([]);
    expect((await q.listDead()).map((d) => d.id)).toEqual(['b3']);
  });
});

describe('drain', () => {
  test('removes pending (FIFO, prioritized, grouped) and delayed jobs; leased, completed and dead stay', async () => {
    const q = res.queue<string>('d', { groupConcurrency: 2 });
    const obs = res.client();
    await complete(q, ['done']);
    await kill(q, ['dead']);
    await q.add('leased', { jobId: 'leased', group: 'g1' });
    const [lease] = await q.lease();
    const waiting = ['p', 'hi', 'g1a', 'g2a', 'later'];
    await q.add('p', { jobId: 'p' });
    await q.add('hi', { jobId: 'hi', priority: 7 });
    await q.add('g1a', { jobId: 'g1a', group: 'g1' });
    await q.add('g2a', { jobId: 'g2a', group: 'g2' });
    await q.add('later', { jobId: 'later', delayMs: 60_000 });
    expect(await q.drain()).toBe(5);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, working: 1, completed: 1, dead: 1 });
    for (const id of waiting) expect(await whereIs(obs, q, id)).toEqual([]);
    await booksAgree(obs, q);
    expect(await obs.exists(q.keys.derived.gactive, q.keys.derived.gset)).toBe(0);
    expect(await q.drain()).toBe(0);
    // the leased job settles as usual, and the groups take jobs again
    expect(await q.ack(lease!, 'ok')).toBe(true);
    expect(await obs.hget(q.keys.derived.gwork, 'g1')).toBeNull();
    await q.add('next', { jobId: 'next', group: 'g1' });
    await q.add('plain', { jobId: 'plain' });
    expect((await q.lease({ count: 5 })).map((l) => l.job.id).sort()).toEqual(['next', 'plain']);
  });

  test('a bounded queue: producers waiting for room get it', async () => {
    const q = res.queue<string>('bounded', { bound: 2 });
    const other = res.twin<string>(q, { bound: 2 });
    await q.add('a');
    await q.add('b', { delayMs: 60_000 });
    const first = q.add('c', { waitMs: 10_000 });
    const second = other.add('d', { waitMs: 10_000 });
    await waitUntil(async () => (await q.queueState()).waitingProducers === 2, 'two adds wait for room');
    expect(await q.drain()).toBe(2);
    await expect(first).resolves.toMatchObject({ created: true });
    await expect(second).resolves.toMatchObject({ created: true });
    expect(await q.counts()).toMatchObject({ pending: 2, delayed: 0 });
  });

  test('a closed queue: a worker blocked on it sees it drained and stops', async () => {
    const q = res.queue<string>('closing');
    await q.add('held', { delayMs: 60_000 });
    await q.closeQueue();
    const blocked = q.lease({ blockMs: 5000 });
    const obs = res.client();
    await waitUntil(async () => (await blockedClients(obs)) >= 1, 'the lease blocks on the closed queue');
    const t0 = Date.now();
    await q.drain();
    expect(await blocked).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
