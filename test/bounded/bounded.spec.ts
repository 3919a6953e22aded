/**
 * Bounded queues (pressure-style): the bound, waiting producers, tryAdd, timeouts, arrival
 * order, closeQueue / reopenQueue / deleteQueue, and Queue.close() releasing waiting adds.
 */
import {
  ClosedError,
  Queue,
  QueueClosedError,
  QueueDeletedError,
  QueueFullError,
  ValidationError,
  Worker,
} from '../../lib/index.js';
import { useRedis, blockedClients, commandStats, scanKeys, sleep, statsDelta, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();

/** pending + working + delayed, as the bound counts them. */
async function unfinished(q: Queue<any, any>): Promise<number> {
  const c = await q.counts();
  return c.pending + c.working + c.delayed;
}

/** Waits until `n` producers are registered as waiting for room in `q`. */
function producersWaiting(q: Queue<any, any>, n: number): Promise<void> {
  return waitUntil(async () => (await q.queueState()).waitingProducers === n, `${n} waiting producer(s)`, 10_000);
}

describe('bound', () => {
  test('tryAdd fails at once with QueueFullError; pending, working and delayed all count', async () => {
    const q = res.queue('b1', { bound: 3 });
    await q.add(1);
    await q.add(2, { delayMs: 60_000 });
    await q.add(3);
    const [lease] = await q.lease();
    expect(lease).toBeDefined();
    const t0 = Date.now();
    await expect(q.tryAdd(4)).rejects.toBeInstanceOf(QueueFullError);
    await expect(q.tryAdd(4)).rejects.toMatchObject({ code: 'RELQ_QUEUE_FULL', bound: 3 });
    expect(Date.now() - t0).toBeLessThan(3000); // refused, not waiting for room
    expect(await unfinished(q)).toBe(3);
    await q.ack(lease!);
    expect((await q.tryAdd(4)).created).toBe(true);
    await expect(q.tryAdd(5)).rejects.toBeInstanceOf(QueueFullError);
  });

  test('completed and dead jobs do not count; a nack that retries still does', async () => {
    const q = res.queue('b2', { bound: 2 });
    await q.add('a', { attempts: 2 });
    await q.add('b', { attempts: 1 });
    const [a, b] = await q.lease({ count: 2 });
    await q.nack(a!, { error: 'x', delayMs: 0 }); // retried: still unfinished
    await expect(q.tryAdd('c')).rejects.toBeInstanceOf(QueueFullError);
    await q.nack(b!, { error: 'x' }); // out of attempts: dead
    expect((await q.counts()).dead).toBe(1);
    await q.tryAdd('c');
    await expect(q.tryAdd('d')).rejects.toBeInstanceOf(QueueFullError);
  });

  test('addBulk is all or nothing; more jobs than the bound can never fit', async () => {
    const q = res.queue('b3', { bound: 3 });
    await q.add(0);
    await expect(q.tryAddBulk([{ data: 1 }, { data: 2 }, { data: 3 }])).rejects.toBeInstanceOf(QueueFullError);
    expect(await unfinished(q)).toBe(1);
    await q.tryAddBulk([{ data: 1 }, { data: 2 }]);
    expect(await unfinished(q)).toBe(3);
    await expect(q.addBulk([1, 2, 3, 4].map((data) => ({ data })))).rejects.toBeInstanceOf(ValidationError);
  });

  test('a duplicate custom id needs no slot', async () => {
    const q = res.queue('b4', { bound: 1 });
    expect((await q.add('x', { jobId: 'same' })).created).toBe(true);
    expect((await q.tryAdd('x', { jobId: 'same' })).created).toBe(false);
  });

  test('add() waits and resumes promptly when a job is acked, without polling', async () => {
    const q = res.queue('b5', { bound: 2 });
    const consumer = res.twin(q);
    const obs = res.client();
    await q.add(1);
    await q.add(2);
    let done = false;
    const waiting = q.add(3).then((r) => {
      done = true;
      return r;
    });
    await producersWaiting(q, 1);
    expect(done).toBe(false);
    const before = await commandStats(obs);
    await sleep(600); // blocked: no polling (at most one registration renewal, every second)
    const during = statsDelta(before, await commandStats(obs));
    expect(during.fcall ?? 0).toBeLessThanOrEqual(1);
    expect(during.hsetnx ?? 0).toBe(0);
    expect(done).toBe(false);
    const [lease] = await consumer.lease();
    const ackedAt = Date.now();
    await consumer.ack(lease!);
    const r = await within(waiting, 5000, 'waiting add');
    expect(Date.now() - ackedAt).toBeLessThan(900); // woken by the ack, not by the next renewal a second on
    expect(r.created).toBe(true);
    expect(await unfinished(q)).toBe(2);
    // the waiter registration is gone once nothing waits
    expect(await obs.exists(q.keys.derived.waiters)).toBe(0);
  });

  test('a Worker on the queue frees slots: waiting adds go through one by one', async () => {
    const q = res.queue<number>('b6', { bound: 3 });
    const seen: number[] = [];
    res.worker(
      new Worker(res.twin<number>(q), async (job) => {
        await sleep(5);
        seen.push(job.data);
      }, { concurrency: 2, blockMs: 1000 }),
    );
    await Promise.all(Array.from({ length: 30 }, (_, i) => q.add(i)));
    await waitUntil(() => seen.length === 30, 'all 30 processed');
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  test('waitMs ends the wait with QueueFullError', async () => {
    const q = res.queue('b7', { bound: 1 });
    await q.add(1);
    const t0 = Date.now();
    await expect(q.add(2, { waitMs: 300 })).rejects.toBeInstanceOf(QueueFullError);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(3000); // at its timeout, not much later
    await expect(q.add(2, { waitMs: 0 })).rejects.toBeInstanceOf(QueueFullError);
    expect(await unfinished(q)).toBe(1);
  });

  test('waiting producers of different processes are admitted in arrival order; newcomers queue behind', async () => {
    const q = res.queue<string>('b8', { bound: 1 });
    const consumer = res.twin<string>(q);
    await q.add('first');
    const producers = ['A', 'B', 'C'].map(() => res.twin<string>(q, { bound: 1 }));
    const admitted: string[] = [];
    const waits: Array<Promise<unknown>> = [];
    for (const [i, p] of producers.entries()) {
      const name = 'ABC'[i]!;
      waits.push(p.add(name).then(() => admitted.push(name)));
      await producersWaiting(q, i + 1); // clear arrival order
    }
    for (let i = 0; i < 3; i++) {
      const [l] = await consumer.lease();
      await consumer.ack(l!);
      await waitUntil(() => admitted.length === i + 1, `admission ${i + 1}`);
      // a newcomer's tryAdd cannot jump the queue while others wait
      if (i < 2) await expect(q.tryAdd('newcomer')).rejects.toBeInstanceOf(QueueFullError);
    }
    await Promise.all(waits);
    expect(admitted).toEqual(['A', 'B', 'C']);
  });

  test('Queue.close() releases a waiting add with ClosedError (never hangs shutdown)', async () => {
    const q = res.queue('b9', { bound: 1 });
    await q.add(1);
    const waiting = q.add(2).catch((e: unknown) => e);
    await producersWaiting(q, 1);
    await within(q.close(), 5000, 'close');
    expect(await waiting).toBeInstanceOf(ClosedError);
  });

  test('the bound is stored in Redis: queueState() shows it; 0 removes it', async () => {
    const q = res.queue('b10', { bound: 5 });
    await q.add(1);
    expect(await q.queueState()).toMatchObject({ bound: 5, closed: false, waitingProducers: 0 });
    const other = res.twin(q, { bound: 0 });
    await other.add(2);
    expect((await q.queueState()).bound).toBe(0);
  });
});

describe('closeQueue / reopenQueue', () => {
  test('adds fail with QueueClosedError; isQueueClosed; reopen', async () => {
    const q = res.queue('c1', { checkClosed: true });
    await q.add(1);
    expect(await q.isQueueClosed()).toBe(false);
    expect(await q.closeQueue()).toBe(true);
    expect(await q.closeQueue()).toBe(false);
    expect(await q.isQueueClosed()).toBe(true);
    await expect(q.add(2)).rejects.toBeInstanceOf(QueueClosedError);
    await expect(q.add(2)).rejects.toMatchObject({ code: 'RELQ_QUEUE_CLOSED' });
    // what is left can still be consumed
    const [l] = await q.lease();
    expect(l!.job.data).toBe(1);
    expect(await q.reopenQueue()).toBe(true);
    await q.add(3);
  });

  test('a bounded producer blocked on the full queue is released with QueueClosedError', async () => {
    const q = res.queue('c2', { bound: 1 });
    await q.add(1);
    const waiting = q.add(2);
    waiting.catch(() => undefined);
    await producersWaiting(q, 1);
    await res.twin(q).closeQueue();
    await expect(within(waiting, 5000, 'blocked add')).rejects.toBeInstanceOf(QueueClosedError);
  });

  test('a blocked consumer is woken: workers drain what is left, then stop by themselves', async () => {
    const q = res.queue<number>('c3');
    const done: number[] = [];
    const stopped: string[] = [];
    const workers = [1, 2].map(() => {
      const w = res.worker(
        new Worker(res.twin<number>(q), async (job) => {
          await sleep(20);
          done.push(job.data);
        }, { blockMs: 30_000, concurrency: 2 }),
      );
      w.events.subscribe((e) => {
        if (e.type === 'stopped') stopped.push(e.reason);
      });
      return w;
    });
    const obs = res.client();
    await waitUntil(async () => (await blockedClients(obs)) === 2, 'both blocked on the empty queue (blockMs 30 s)', 10_000);
    await q.addBulk([1, 2, 3, 4, 5, 6].map((data) => ({ data })));
    await q.closeQueue();
    await waitUntil(() => stopped.length === 2, 'both workers stopped, well before their 30 s block ends', 10_000);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stopped).toEqual(['queue closed', 'queue closed']);
    expect(workers.every((w) => !w.isRunning)).toBe(true);
  });

  test('lease() on a closed, drained queue returns at once', async () => {
    const q = res.queue('c4');
    await q.closeQueue();
    const t0 = Date.now();
    expect(await q.lease({ blockMs: 15_000 })).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5000); // not at the end of its 15 s block
  });

  test('a producer without options sees closeQueue: at once when it has not read the queue yet, within a second while adding', async () => {
    const q = res.queue<number>('c5');
    const obs = res.client();
    await q.closeQueue();
    // a new producer knows nothing of the queue yet: its first add checks the state itself
    await expect(q.add(1)).rejects.toBeInstanceOf(QueueClosedError);

    await res.twin(q).reopenQueue();
    // reopened: once its reading is fresh, the producer is back on the 3-command path
    await waitUntil(async () => {
      await q.add(2);
      const before = await commandStats(obs);
      await q.add(3);
      const d = statsDelta(before, await commandStats(obs));
      delete d.info;
      return d.fcall === 1 && d.hsetnx === 1 && d.rpush === 1 && Object.keys(d).length === 3;
    }, 'plain adds again', 10_000);

    // another process closes the queue while this producer keeps adding
    await res.twin(q).closeQueue();
    const closedAt = Date.now();
    let refusedAt = 0;
    for (let i = 0; Date.now() - closedAt < 3000; i++) {
      try {
        await q.add(100 + i);
        await sleep(20);
      } catch (err) {
        expect(err).toBeInstanceOf(QueueClosedError);
        refusedAt = Date.now();
        break;
      }
    }
    expect(refusedAt).toBeGreaterThan(0);
    expect(refusedAt - closedAt).toBeLessThan(2000); // a reading is at most a second old (plus the adds around it)
    const strict = res.twin(q, { checkClosed: true });
    await expect(strict.add(2)).rejects.toBeInstanceOf(QueueClosedError);
  });

  test('a producer without options waits on a bound another producer set, and fails on a deleted queue', async () => {
    const setter = res.queue<number>('c6', { bound: 2 });
    await setter.add(1);
    const plain = res.twin<number>(setter);
    await plain.add(2); // first add: checks the state (bound 2, one slot left)
    await expect(plain.tryAdd(3)).rejects.toBeInstanceOf(QueueFullError);
    let added = false;
    const waiting = plain.add(3).then(() => (added = true));
    await producersWaiting(setter, 1); // it found no room and waits
    expect(added).toBe(false);
    expect(await unfinished(setter)).toBe(2);
    const [l] = await setter.lease();
    await setter.ack(l!);
    await within(waiting, 5000, 'add waiting for room');
    expect(await unfinished(setter)).toBe(2);

    await res.twin(setter).deleteQueue({ tombstoneMs: 5000 });
    await expect(plain.add(4)).rejects.toBeInstanceOf(QueueDeletedError);
  });
});

describe('deleteQueue', () => {
  test('wakes blocked producers with QueueDeletedError and removes every key', async () => {
    const q = res.queue<number>('d1', { bound: 2, stats: true });
    const obs = res.client();
    await q.add(1, { group: 'g1' });
    await q.add(2, { delayMs: 10_000 });
    const [l] = await q.lease();
    await q.ack(l!);
    await q.add(3, { group: 'g2' });
    const p1 = res.twin<number>(q, { bound: 2 });
    const p2 = res.twin<number>(q, { bound: 2 });
    const waits = [p1.add(10), p2.add(11), p1.add(12)];
    for (const w of waits) w.catch(() => undefined);
    await producersWaiting(q, 2);
    const removed = await res.twin(q).deleteQueue({ tombstoneMs: 1000 });
    expect(removed).toBeGreaterThan(5);
    for (const w of waits) await expect(within(w, 5000, 'blocked add')).rejects.toBeInstanceOf(QueueDeletedError);
    const left = (await scanKeys(obs)).filter((k) => k.startsWith(q.keys.tag));
    // only the short-lived tombstone, wake-up tokens and lease replay records remain; all expire
    const allowed = [q.keys.byName.meta, q.keys.byName.wake, q.keys.derived.notfull, `${q.keys.tag}:role:consumer:free`, `${q.keys.tag}:role:producer:free`];
    expect(left.filter((k) => !allowed.includes(k) && !k.startsWith(`${q.keys.tag}:req:`))).toEqual([]);
    expect(left).toContain(q.keys.byName.meta);
    for (const k of left) expect(await obs.pttl(k)).toBeGreaterThan(0);
    await expect(q.add(4)).rejects.toBeInstanceOf(QueueDeletedError);
    // the tombstone (1 s) expires, and everything with it
    await waitUntil(
      async () => (await scanKeys(obs)).filter((k) => k.startsWith(q.keys.tag) && !k.includes(':req:')).length === 0,
      'the tombstone and the rest to expire',
      10_000,
    );
    // usable again after the tombstone; the producer's bound is stored again
    expect((await q.add(5)).created).toBe(true);
    expect((await q.queueState()).bound).toBe(2);
  });

  test('a blocked worker is woken and stops with QueueDeletedError', async () => {
    const q = res.queue('d2');
    const events: string[] = [];
    const w = res.worker(new Worker(res.twin(q), async () => undefined, { blockMs: 30_000 }));
    w.events.subscribe((e) => events.push(e.type === 'error' ? (e.error as Error).name : e.type));
    const obs = res.client();
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the worker blocked (blockMs 30 s)', 10_000);
    await q.deleteQueue({ tombstoneMs: 2000 });
    await waitUntil(() => events.includes('stopped'), 'worker stopped, well before its 30 s block ends', 10_000);
    expect(events).toContain('QueueDeletedError');
    expect(w.isRunning).toBe(false);
  });

  test('lease() on a deleted queue fails with QueueDeletedError', async () => {
    const q = res.queue('d3');
    await q.add(1);
    await q.deleteQueue();
    await expect(q.lease()).rejects.toBeInstanceOf(QueueDeletedError);
  });
});
