import { Queue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useRedis, commandStats, queueKeysIn, redisNow, statsDelta, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

describe('add', () => {
  test('returns a new id with created: true; ids are distinct; the job is pending with its data', async () => {
    const q = res.queue<{ n: number }>();
    const a = await q.add({ n: 1 });
    const b = await q.add({ n: 2 }, { name: 'second' });
    expect(a.created).toBe(true);
    expect(b.created).toBe(true);
    expect(typeof a.id).toBe('string');
    expect(a.id.length).toBeGreaterThan(0);
    expect(a.id).not.toBe(b.id);
    const info = await q.getJob(b.id);
    expect(info).toMatchObject({ id: b.id, name: 'second', state: 'pending', data: { n: 2 }, failures: 0, dequeues: 0 });
    expect((await q.counts()).pending).toBe(2);
  });

  test('data of every JSON kind round-trips unchanged', async () => {
    const q = res.queue();
    const payloads: unknown[] = [null, 0, -1.5, 'text with\nnewline and "quotes" and ünïcødé ✓', true, [], {}, [1, [2, { a: null }]], { nested: { deep: [1, 'x'] } }];
    for (const p of payloads) {
      const { id } = await q.add(p);
      expect((await q.getJob(id))!.data).toEqual(p);
    }
    const leases = await q.lease({ count: payloads.length });
    expect(leases.map((l) => l.job.data)).toEqual(payloads);
  });
});

describe('addBulk', () => {
  test('returns one result per job, in order, all created', async () => {
    const q = res.queue<{ i: number }>();
    const out = await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ data: { i } })));
    expect(out).toHaveLength(10);
    expect(out.every((r) => r.created)).toBe(true);
    expect(new Set(out.map((r) => r.id)).size).toBe(10);
    const leases = await q.lease({ count: 10 });
    expect(leases.map((l) => l.job.id)).toEqual(out.map((r) => r.id));
    expect(leases.map((l) => l.job.data.i)).toEqual([...Array(10).keys()]);
  });

  test('jobs with and without options in one call keep their order (short and full forms)', async () => {
    const q = res.queue<string>();
    const out = await q.addBulk([
      { data: 'a' },
      { data: 'b', opts: { jobId: 'custom-b' } },
      { data: 'c' },
      { data: 'd', opts: { attempts: 7 } },
      { data: 'e' },
    ]);
    expect(out.map((r) => r.created)).toEqual([true, true, true, true, true]);
    const leases = await q.lease({ count: 5 });
    expect(leases.map((l) => l.job.data)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(leases.map((l) => l.job.id)).toEqual(out.map((r) => r.id));
    expect(leases[3]!.job.maxAttempts).toBe(7);
    // all without options: the short form, same order
    const plain = await q.addBulk(['f', 'g', 'h'].map((data) => ({ data })));
    const more = await q.lease({ count: 3 });
    expect(more.map((l) => l.job.data)).toEqual(['f', 'g', 'h']);
    expect(more.map((l) => l.job.id)).toEqual(plain.map((r) => r.id));
  });

  test('100 jobs are one FCALL (one round trip)', async () => {
    const q = res.queue();
    const obs = res.client();
    await q.add('warm-up'); // the first call on a fresh server also loads the function library
    const before = await commandStats(obs);
    const out = await q.addBulk(Array.from({ length: 100 }, (_, i) => ({ data: i, opts: i % 10 === 0 ? { priority: 1 } : {} })));
    const after = await commandStats(obs);
    const d = statsDelta(before, after);
    expect(out).toHaveLength(100);
    expect(d.fcall).toBe(1);
    expect((d.evalsha ?? 0) + (d.eval ?? 0)).toBe(0);
    // nothing but the one script (and the INFO used to measure) reached the server from outside Lua
    expect((await q.counts()).pending).toBe(101);
  });

  test('created flags per job when some jobIds exist, and a jobId repeated inside one call', async () => {
    const q = res.queue<string>();
    await q.add('old', { jobId: 'k1' });
    const out = await q.addBulk([
      { data: 'a', opts: { jobId: 'k1' } },
      { data: 'b', opts: { jobId: 'k2' } },
      { data: 'c' },
      { data: 'd', opts: { jobId: 'k2' } },
    ]);
    expect(out.map((r) => r.created)).toEqual([false, true, true, false]);
    expect(out[0]!.id).toBe('k1');
    expect(out[1]!.id).toBe('k2');
    expect(out[3]!.id).toBe('k2');
    expect((await q.getJob('k1'))!.data).toBe('old');
    expect((await q.getJob('k2'))!.data).toBe('b');
    expect((await q.counts()).pending).toBe(3);
    const leases = await q.lease({ count: 10 });
    expect(leases.map((l) => l.job.id).sort()).toEqual(['k1', 'k2', out[2]!.id].sort());
  });

  test('empty addBulk returns [] and writes nothing', async () => {
    const q = res.queue();
    const obs = res.client();
    expect(await q.addBulk([])).toEqual([]);
    expect(await queueKeysIn(obs, q)).toEqual([]);
  });
});

describe('jobId idempotency', () => {
  test('adding an existing jobId returns its id with created: false and changes nothing', async () => {
    const q = res.queue<{ v: number }>();
    const first = await q.add({ v: 1 }, { jobId: 'order-42', priority: 3 });
    expect(first).toEqual({ id: 'order-42', created: true });
    const again = await q.add({ v: 2 }, { jobId: 'order-42', delayMs: 10_000 });
    expect(again).toEqual({ id: 'order-42', created: false });
    const info = await q.getJob('order-42');
    expect(info).toMatchObject({ state: 'pending', data: { v: 1 }, priority: 3 });
    const c = await q.counts();
    expect(c.pending).toBe(1);
    expect(c.delayed).toBe(0);
  });

  test('a jobId stays taken while working and after dying', async () => {
    const q = res.queue();
    await q.add('x', { jobId: 'w', attempts: 1 });
    const [l] = await q.lease();
    expect(await q.add('y', { jobId: 'w' })).toEqual({ id: 'w', created: false });
    await q.reject(l!, 'nope');
    expect(await q.add('y', { jobId: 'w' })).toEqual({ id: 'w', created: false });
    expect((await q.counts()).pending).toBe(0);
  });

  test('20 concurrent adds of one jobId from 20 Queue instances create exactly one job', async () => {
    const base = res.queue<number>('idem');
    const queues = Array.from({ length: 20 }, () => res.twin<number>(base));
    // all connections up first, so the adds really race
    await Promise.all(queues.map((q) => q.client.ping()));
    const results = await Promise.all(queues.map((q, i) => q.add(i, { jobId: 'same' })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.every((r) => r.id === 'same')).toBe(true);
    const c = await base.counts();
    expect(c.pending).toBe(1);
    const winner = results.findIndex((r) => r.created);
    expect((await base.getJob('same'))!.data).toBe(winner);
    const leases = await base.lease({ count: 20 });
    expect(leases).toHaveLength(1);
  });

  test('dedupWindowMs: remembered after completion within the window, forgotten after a sweep past it', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('one', { jobId: 'd1', keepCompletedMs: 0, dedupWindowMs: 1500 });
    const [l] = await q.lease();
    expect(await q.ack(l!)).toBe(true);
    const acked = await redisNow(obs); // the window runs from the ack, which came before this
    expect(await q.getJob('d1')).toBeNull(); // keepCompletedMs 0: record gone
    expect(await q.add('two', { jobId: 'd1' })).toEqual({ id: 'd1', created: false });
    expect((await q.counts()).pending).toBe(0);
    await untilRedisTime(obs, acked + 1500, 'the end of the idempotency window');
    const swept = await q.sweep();
    expect(swept.dedupForgotten).toBe(1);
    expect(await q.add('three', { jobId: 'd1' })).toEqual({ id: 'd1', created: true });
    expect((await q.getJob('d1'))!.data).toBe('three');
  });

  test('the default idempotency window outlives a keepCompletedMs: 0 job', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('one', { jobId: 'd2', keepCompletedMs: 0 });
    const [l] = await q.lease();
    await q.ack(l!);
    await untilRedisTime(obs, (await redisNow(obs)) + 50, 'the (zero) retention to be over');
    await q.sweep();
    expect(await q.add('two', { jobId: 'd2' })).toEqual({ id: 'd2', created: false });
  });

  test('generated ids never collide across Queue instances', async () => {
    const base = res.queue('ids');
    const others = [base, res.twin(base), res.twin(base)];
    const all = await Promise.all(others.map((q) => q.addBulk(Array.from({ length: 50 }, (_, i) => ({ data: i })))));
    const ids = all.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(150);
    expect((await base.counts()).pending).toBe(150);
  });

  test('the same jobId on two different queues is two jobs', async () => {
    const prefix = uniquePrefix();
    const a = res.track(new Queue('a', { connection: res.server.url, prefix }));
    const b = res.track(new Queue('b', { connection: res.server.url, prefix }));
    expect((await a.add(1, { jobId: 'j' })).created).toBe(true);
    expect((await b.add(2, { jobId: 'j' })).created).toBe(true);
  });
});

describe('jobs added without options', () => {
  const policies = [
    {},
    { attempts: 7, backoff: { type: 'fixed' as const, delayMs: 250, jitter: 0 } },
    { leaseMs: 4000, keepCompletedMs: 0, dedupWindowMs: 10 },
  ];

  test.each(policies)('store exactly the record a job with empty options gets (queue defaults %j)', async (defaults) => {
    const q = res.queue<{ n: number }>('plain', { defaults });
    const obs = res.client();
    const bare = await q.add({ n: 1 });
    const empty = await q.add({ n: 1 }, {});
    const [r1, r2] = (await obs.hmget(q.keys.byName.jobs, bare.id, empty.id)) as [string, string];
    const withoutTime = (r: string) => r.replace(/^\{"t":\d+/, '{"t":0');
    expect(withoutTime(r1)).toBe(withoutTime(r2));
    expect(r1).toMatch(/^\{"t":\d{13}[,}]/);
    const [l] = await q.lease();
    expect(l!.job.policy).toEqual((await q.lease())[0]!.job.policy);
    expect(l!.job.maxAttempts).toBe(defaults.attempts ?? 3);
  });
});
