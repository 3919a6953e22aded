/**
 * Deduplication by an id of its own (JobOptions.deduplication), apart from the job id: each
 * mode, keepLastIfActive, the 'deduplicated' event, getDeduplicationJobId and
 * removeDeduplicationKey, addBulk, a bounded queue, removal and deletion, and bad input
 * refused before anything is written.
 */
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { ValidationError, type QueueEvent } from '../../lib/index.js';
import { MAX_MS } from '../../lib/core/defaults.js';
import {
  commandStats,
  eventsReady,
  queueKeysIn,
  redisNow,
  scriptCalls,
  sleep,
  statsDelta,
  untilRedisTime,
  useRedis,
  waitUntil,
  within,
} from '../support/engine-harness.js';

const res = useRedis();

describe('untilEnded (the default without ttlMs)', () => {
  test('adds that share the id create nothing while the job waits or runs; its ack frees the id', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { deduplication: { id: 'report' } });
    expect(a.created).toBe(true);
    expect(await q.getDeduplicationJobId('report')).toBe(a.id);
    // another jobId does not matter: the deduplication id does
    expect(await q.add('b', { jobId: 'other', deduplication: { id: 'report' } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
    expect(await q.getJob('other')).toBeNull();
    const [l] = await q.lease();
    expect(await q.add('c', { deduplication: { id: 'report' } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
    expect(await q.counts()).toMatchObject({ pending: 0, working: 1 });
    expect((await q.getJob(a.id))!.data).toBe('a');
    await q.ack(l!);
    expect(await q.getDeduplicationJobId('report')).toBeNull();
    expect(await res.client().hlen(q.keys.derived.dedupIds)).toBe(0); // released by the ack itself
    const d = await q.add('d', { deduplication: { id: 'report' } });
    expect(d.created).toBe(true);
    expect(d.id).not.toBe(a.id);
    expect(await q.getDeduplicationJobId('report')).toBe(d.id);
    expect((await q.getJob(d.id))!.deduplicationId).toBe('report');
  });

  test('a dead job frees its id, and so does a removed one', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { attempts: 1, deduplication: { id: 'x' } });
    const [l] = await q.lease();
    await q.nack(l!, { error: new Error('boom') });
    expect((await q.getJob(a.id))!.state).toBe('dead');
    expect(await q.getDeduplicationJobId('x')).toBeNull();
    const obs = res.client();
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
    const b = await q.add('b', { deduplication: { id: 'x' } });
    expect(b.created).toBe(true);
    expect(await q.remove(b.id)).toBe(true);
    expect(await q.getDeduplicationJobId('x')).toBeNull();
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
    expect((await q.add('c', { deduplication: { id: 'x' } })).created).toBe(true);
  });

  test('a failed attempt that retries keeps the id held', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { attempts: 3, deduplication: { id: 'x' } });
    const [l] = await q.lease();
    await q.nack(l!, { error: new Error('boom'), delayMs: 0 });
    expect(await q.add('b', { deduplication: { id: 'x' } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
  });

  test('drain frees the ids its jobs held', async () => {
    const q = res.queue<string>();
    await q.add('a', { deduplication: { id: 'x' } });
    await q.add('b', { delayMs: 60_000, deduplication: { id: 'y' } });
    expect(await q.drain()).toBe(2);
    expect(await q.getDeduplicationJobId('x')).toBeNull();
    expect(await q.getDeduplicationJobId('y')).toBeNull();
    const obs = res.client();
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
  });
});

describe('throttle', () => {
  test('the first add in the window wins, whatever its job does; the window ends on the Redis clock', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const a = await q.add('a', { deduplication: { id: 't', ttlMs: 1000 } });
    const addedAt = await redisNow(obs);
    expect(a.created).toBe(true);
    const [l] = await q.lease();
    await q.ack(l!);
    // completed, yet the window holds
    expect(await q.add('b', { deduplication: { id: 't', mode: 'throttle', ttlMs: 1000 } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
    expect(await q.getDeduplicationJobId('t')).toBe(a.id);
    await untilRedisTime(obs, addedAt + 1000, 'the end of the throttle window');
    expect(await q.getDeduplicationJobId('t')).toBeNull();
    const c = await q.add('c', { deduplication: { id: 't', ttlMs: 1000 } });
    expect(c.created).toBe(true);
    expect(await q.getDeduplicationJobId('t')).toBe(c.id);
  });

  test('a sweep forgets ended windows', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('a', { deduplication: { id: 't', ttlMs: 50 } });
    expect(await obs.zcard(q.keys.derived.dedupTtl)).toBe(1);
    await untilRedisTime(obs, (await redisNow(obs)) + 60, 'the end of the window');
    await q.sweep();
    expect(await obs.zcard(q.keys.derived.dedupTtl)).toBe(0);
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
  });
});

describe('debounce', () => {
  test('a burst of adds makes one job with the last data, due the last delay after the last add', async () => {
    const q = res.queue<{ v: number }>();
    const obs = res.client();
    const first = await q.add({ v: 0 }, { delayMs: 60_000, deduplication: { id: 'doc', mode: 'debounce' } });
    expect(first.created).toBe(true);
    for (let v = 1; v <= 5; v++) {
      expect(await q.add({ v }, { delayMs: 60_000 + v * 1000, deduplication: { id: 'doc', mode: 'debounce' } })).toEqual({
        id: first.id,
        created: false,
        deduplicated: 'replaced',
      });
    }
    const lastAt = await redisNow(obs);
    const info = await q.getJob(first.id);
    expect(info).toMatchObject({ state: 'delayed', data: { v: 5 } });
    expect(info!.runAt).toBeGreaterThanOrEqual(lastAt + 65_000 - 1000);
    expect(info!.runAt).toBeLessThanOrEqual(lastAt + 65_000);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 1 });
  });

  test('an add without a delay makes the waiting job pending now; a pending job goes back to waiting for a delay', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { delayMs: 60_000, deduplication: { id: 'd', mode: 'debounce' } });
    expect((await q.add('b', { deduplication: { id: 'd', mode: 'debounce' } })).deduplicated).toBe('replaced');
    expect(await q.getJob(a.id)).toMatchObject({ state: 'pending', data: 'b' });
    expect((await q.add('c', { delayMs: 60_000, deduplication: { id: 'd', mode: 'debounce' } })).deduplicated).toBe('replaced');
    expect(await q.getJob(a.id)).toMatchObject({ state: 'delayed', data: 'c' });
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 1 });
    expect(await q.lease({ count: 10 })).toHaveLength(0);
  });

  test('once its job is leased it is no longer replaced: the next add makes a new job, which takes the id', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { deduplication: { id: 'd', mode: 'debounce' } });
    const [l] = await q.lease();
    const b = await q.add('b', { delayMs: 60_000, deduplication: { id: 'd', mode: 'debounce' } });
    expect(b.created).toBe(true);
    expect(await q.getDeduplicationJobId('d')).toBe(b.id);
    expect((await q.getJob(a.id))!.data).toBe('a');
    // the running job's end no longer frees the id: the new job holds it
    await q.ack(l!);
    expect(await q.getDeduplicationJobId('d')).toBe(b.id);
    expect((await q.add('c', { deduplication: { id: 'd', mode: 'debounce' } })).deduplicated).toBe('replaced');
  });

  test('the replaced job keeps its options and failure history', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { name: 'first', priority: 5, attempts: 4, deduplication: { id: 'd', mode: 'debounce' } });
    const [l] = await q.lease();
    await q.nack(l!, { error: new Error('boom'), delayMs: 60_000 });
    expect((await q.add('b', { name: 'second', priority: 1, deduplication: { id: 'd', mode: 'debounce' } })).deduplicated).toBe('replaced');
    expect(await q.getJob(a.id)).toMatchObject({ state: 'pending', data: 'b', name: 'first', priority: 5, maxAttempts: 4, failures: 1 });
  });
});

describe('keepLastIfActive', () => {
  test('adds while the job runs: the last is kept and added once it completes; one more run, never two at once', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { deduplication: { id: 'k', keepLastIfActive: true } });
    // waiting: ignored, as without the option
    expect((await q.add('early', { deduplication: { id: 'k', keepLastIfActive: true } })).deduplicated).toBe('ignored');
    const [l] = await q.lease();
    for (const data of ['b', 'c', 'd']) {
      expect(await q.add(data, { deduplication: { id: 'k', keepLastIfActive: true } })).toEqual({ id: a.id, created: false, deduplicated: 'deferred' });
    }
    expect(await q.counts()).toMatchObject({ pending: 0, working: 1, delayed: 0 });
    await q.ack(l!);
    const [next] = await q.lease();
    expect(next!.job.data).toBe('d');
    expect(await q.getDeduplicationJobId('k')).toBe(next!.job.id);
    expect(await q.lease({ count: 10 })).toHaveLength(0);
    // the kept add holds the id in its turn
    expect((await q.add('e', { deduplication: { id: 'k', keepLastIfActive: true } })).deduplicated).toBe('deferred');
    await q.ack(next!);
    expect((await q.lease())[0]!.job.data).toBe('e');
  });

  test("debounce: the kept add's delay counts from the end of the running job; a dead job releases it too", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('a', { attempts: 1, deduplication: { id: 'k', mode: 'debounce', keepLastIfActive: true } });
    const [l] = await q.lease();
    expect((await q.add('b', { delayMs: 30_000, deduplication: { id: 'k', mode: 'debounce', keepLastIfActive: true } })).deduplicated).toBe('deferred');
    await untilRedisTime(obs, (await redisNow(obs)) + 200, 'some time to pass');
    await q.reject(l!, 'no');
    const endedAt = await redisNow(obs);
    const held = await q.getDeduplicationJobId('k');
    const info = await q.getJob(held!);
    expect(info).toMatchObject({ state: 'delayed', data: 'b' });
    expect(info!.runAt).toBeGreaterThanOrEqual(endedAt + 30_000 - 200);
    // waiting now: a debounce add replaces it
    expect((await q.add('c', { deduplication: { id: 'k', mode: 'debounce', keepLastIfActive: true } })).deduplicated).toBe('replaced');
    expect(await q.getJob(held!)).toMatchObject({ state: 'pending', data: 'c' });
  });

  test('a forced removal of the running job drops the kept add; without the option an add is ignored', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { deduplication: { id: 'k' } });
    await q.lease();
    expect((await q.add('b', { deduplication: { id: 'k' } })).deduplicated).toBe('ignored');
    expect((await q.add('c', { deduplication: { id: 'k', keepLastIfActive: true } })).deduplicated).toBe('deferred');
    await q.remove(a.id, { force: true });
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0 });
    expect(await q.getDeduplicationJobId('k')).toBeNull();
    const obs = res.client();
    expect(await obs.hlen(q.keys.derived.dedupNext)).toBe(0);
  });
});

describe('removeDeduplicationKey', () => {
  test('frees the id at once: the next add creates, the old job stays; false when nothing held it', async () => {
    const q = res.queue<string>();
    const a = await q.add('a', { deduplication: { id: 'x' } });
    expect(await q.removeDeduplicationKey('x')).toBe(true);
    expect(await q.getDeduplicationJobId('x')).toBeNull();
    const b = await q.add('b', { deduplication: { id: 'x' } });
    expect(b.created).toBe(true);
    expect(await q.counts()).toMatchObject({ pending: 2 });
    expect(await q.removeDeduplicationKey('nothing')).toBe(false);
    // the old job's end no longer touches the id: b holds it
    const leases = await q.lease({ count: 2 });
    await q.ack(leases.find((l) => l.job.id === a.id)!);
    expect(await q.getDeduplicationJobId('x')).toBe(b.id);
  });
});

describe("the 'deduplicated' event", () => {
  test('names the job that holds the id, the id and what became of the add', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const seen = firstValueFrom(q.events().pipe(filter((e) => e.type === 'deduplicated'), take(2), toArray()));
    await eventsReady(obs, q);
    const a = await q.add('a', { delayMs: 60_000, deduplication: { id: 'e', mode: 'debounce' } });
    await q.add('b', { delayMs: 90_000, deduplication: { id: 'e', mode: 'debounce' } });
    const c = await q.add('c', { deduplication: { id: 'u' } });
    await q.add('d', { deduplication: { id: 'u' } });
    const events = await within(seen, 5000, 'the deduplicated events');
    expect(events[0]).toMatchObject({ type: 'deduplicated', id: a.id, deduplicationId: 'e', outcome: 'replaced' });
    expect(typeof events[0]!.runAt).toBe('number');
    expect(events[1]).toMatchObject({ type: 'deduplicated', id: c.id, deduplicationId: 'u', outcome: 'ignored' } satisfies Partial<QueueEvent>);
  });

  test("reaches a listener that subscribed after the producer's last reading of the queue", async () => {
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const obs = res.client();
    const a = await producer.add('a', { deduplication: { id: 'x' } });
    await sleep(100); // its reading (nobody listens) is in, and fresh for a while
    const seen = firstValueFrom(q.events().pipe(filter((e) => e.type === 'deduplicated')));
    await eventsReady(obs, q);
    await producer.add('b', { deduplication: { id: 'x' } });
    expect(await within(seen, 3000, 'the deduplicated event')).toMatchObject({ id: a.id, deduplicationId: 'x' });
  });

  test('watch() follows a debounced job to its new state', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const a = await q.add('a', { delayMs: 60_000, deduplication: { id: 'w', mode: 'debounce' } });
    const states: string[] = [];
    const sub = q.watch(a.id).subscribe((s) => states.push(s));
    await eventsReady(obs, q);
    await waitUntil(() => states.includes('delayed'), 'the first state');
    await q.add('b', { deduplication: { id: 'w', mode: 'debounce' } });
    await waitUntil(() => states.includes('pending'), 'pending after the add without a delay');
    sub.unsubscribe();
  });
});

describe('addBulk and bounded queues', () => {
  test('each job its own: the first of an id in one call takes it, the rest meet it', async () => {
    const q = res.queue<string>();
    const out = await q.addBulk([
      { data: 'a', opts: { deduplication: { id: 'x' } } },
      { data: 'plain' },
      { data: 'b', opts: { deduplication: { id: 'x' } } },
      { data: 'c', opts: { deduplication: { id: 'y' } } },
      // debounce within the call: the first, gathered to be pending, is moved to wait for the delay
      { data: 'd1', opts: { deduplication: { id: 'z', mode: 'debounce' } } },
      { data: 'd2', opts: { delayMs: 60_000, deduplication: { id: 'z', mode: 'debounce' } } },
    ]);
    expect(out.map((r) => r.created)).toEqual([true, true, false, true, true, false]);
    expect(out[2]).toEqual({ id: out[0]!.id, created: false, deduplicated: 'ignored' });
    expect(out[5]).toEqual({ id: out[4]!.id, created: false, deduplicated: 'replaced' });
    expect(await q.counts()).toMatchObject({ pending: 3, delayed: 1 });
    expect(await q.getJob(out[4]!.id)).toMatchObject({ state: 'delayed', data: 'd2' });
    const leased = await q.lease({ count: 10 });
    expect(leased.map((l) => l.job.data)).toEqual(['a', 'plain', 'c']);
  });

  test('a full bounded queue takes a deduplicated add (it needs no room)', async () => {
    const q = res.queue<string>('b', { bound: 1 });
    const a = await q.tryAdd('a', { deduplication: { id: 'x' } });
    expect(await q.tryAdd('b', { deduplication: { id: 'x' } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
    const bulk = await q.tryAddBulk([
      { data: 'c', opts: { deduplication: { id: 'x' } } },
      { data: 'd', opts: { deduplication: { id: 'x' } } },
    ]);
    expect(bulk.every((r) => r.deduplicated === 'ignored')).toBe(true);
  });

  test('deleteQueue removes the deduplication keys', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('a', { deduplication: { id: 'x' } });
    await q.add('b', { deduplication: { id: 't', ttlMs: 60_000 } });
    const [l] = await q.lease();
    await q.add('c', { deduplication: { id: 'x', keepLastIfActive: true } });
    expect(l!.job.data).toBe('a');
    const dedupKeys = [q.keys.derived.dedupIds, q.keys.derived.dedupTtl, q.keys.derived.dedupNext];
    expect(await obs.exists(...dedupKeys)).toBe(3);
    await q.deleteQueue();
    expect(await obs.exists(...dedupKeys)).toBe(0);
  });
});

describe('jobs without deduplication pay nothing', () => {
  test('add, lease and ack of a plain job touch no deduplication key', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('warm-up');
    await q.ack((await q.lease())[0]!);
    await obs.config('RESETSTAT');
    await q.add('a', { keepCompletedMs: 10, attempts: 2 });
    await q.ack((await q.lease())[0]!);
    const d = statsDelta({}, await commandStats(obs));
    // the script calls and what a plain job costs: none of the reads a deduplication id needs
    expect(scriptCalls(d)).toBeGreaterThan(0);
    for (const cmd of ['hget', 'hexists', 'zscore', 'hkeys']) expect([cmd, d[cmd] ?? 0]).toEqual([cmd, 0]);
  });
});

describe('validation: a typed error before anything is written', () => {
  const cases: Array<[string, unknown, string]> = [
    ['not an object', 'x', 'opts.deduplication'],
    ['an unknown key', { id: 'x', extend: true }, 'opts.deduplication'],
    ['no id', {}, 'opts.deduplication.id'],
    ['an empty id', { id: '' }, 'opts.deduplication.id'],
    ['an id of 257 characters', { id: 'x'.repeat(257) }, 'opts.deduplication.id'],
    ['an id with a control character', { id: 'a\nb' }, 'opts.deduplication.id'],
    ['an id that is a number', { id: 7 }, 'opts.deduplication.id'],
    ['an unknown mode', { id: 'x', mode: 'fixed' }, 'opts.deduplication.mode'],
    ['throttle without ttlMs', { id: 'x', mode: 'throttle' }, 'opts.deduplication.ttlMs'],
    ['ttlMs 0', { id: 'x', ttlMs: 0 }, 'opts.deduplication.ttlMs'],
    ['ttlMs not whole', { id: 'x', ttlMs: 1.5 }, 'opts.deduplication.ttlMs'],
    ['ttlMs past MAX_MS', { id: 'x', ttlMs: MAX_MS + 1 }, 'opts.deduplication.ttlMs'],
    ['ttlMs with untilEnded', { id: 'x', mode: 'untilEnded', ttlMs: 10 }, 'opts.deduplication.ttlMs'],
    ['ttlMs with debounce', { id: 'x', mode: 'debounce', ttlMs: 10 }, 'opts.deduplication.ttlMs'],
    ['keepLastIfActive with throttle', { id: 'x', ttlMs: 10, keepLastIfActive: true }, 'opts.deduplication.keepLastIfActive'],
    ['keepLastIfActive not a boolean', { id: 'x', keepLastIfActive: 'yes' }, 'opts.deduplication.keepLastIfActive'],
  ];

  test.each(cases)('%s', async (_label, deduplication, field) => {
    const q = res.queue();
    const obs = res.client();
    const before = await commandStats(obs);
    const err = await q.add('x', { deduplication } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
    expect(scriptCalls(statsDelta(before, await commandStats(obs)))).toBe(0);
    expect(await queueKeysIn(obs, q)).toEqual([]);
  });

  test('addBulk names the job; flows and schedulers refuse it', async () => {
    const q = res.queue();
    const obs = res.client();
    const bulk = await q.addBulk([{ data: 1 }, { data: 2, opts: { deduplication: { id: '' } } }]).catch((e: unknown) => e);
    expect((bulk as ValidationError).field).toBe('jobs[1].opts.deduplication.id');
    const flow = await q.addFlow({ data: 1, children: [{ data: 2, opts: { deduplication: { id: 'x' } } as never }] }).catch((e: unknown) => e);
    expect(flow).toBeInstanceOf(ValidationError);
    expect((flow as ValidationError).field).toBe('flow.children[0].opts.deduplication');
    const sched = await q.upsertScheduler('s', { everyMs: 1000 }, { data: 1, opts: { deduplication: { id: 'x' } } as never }).catch((e: unknown) => e);
    expect((sched as ValidationError).field).toBe('template.opts.deduplication');
    expect(await queueKeysIn(obs, q)).toEqual([]);
  });

  test('getDeduplicationJobId and removeDeduplicationKey check the id', async () => {
    const q = res.queue();
    await expect(q.getDeduplicationJobId('')).rejects.toBeInstanceOf(ValidationError);
    await expect(q.removeDeduplicationKey(5 as never)).rejects.toBeInstanceOf(ValidationError);
  });
});
