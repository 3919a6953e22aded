import { useRedis, redisNow, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

describe('getJob', () => {
  test('null for an unknown id', async () => {
    const q = res.queue();
    expect(await q.getJob('nope')).toBeNull();
  });

  test('pending', async () => {
    const q = res.queue<{ a: number }>();
    const obs = res.client();
    const t0 = await redisNow(obs);
    const { id } = await q.add({ a: 1 }, { name: 'n', priority: -2, attempts: 7 });
    const t1 = await redisNow(obs);
    const info = await q.getJob(id);
    expect(info).toMatchObject({
      id,
      name: 'n',
      state: 'pending',
      data: { a: 1 },
      priority: -2,
      failures: 0,
      maxAttempts: 7,
      dequeues: 0,
      requeues: 0,
    });
    expect(info!.createdAt).toBeGreaterThanOrEqual(t0);
    expect(info!.createdAt).toBeLessThanOrEqual(t1);
    for (const k of ['leaseDeadline', 'runAt', 'completedAt', 'retainedUntil', 'diedAt', 'result', 'lastError'] as const) {
      expect(info![k]).toBeUndefined();
    }
  });

  test('working, with its lease deadline', async () => {
    const q = res.queue();
    const { id } = await q.add('x');
    const [l] = await q.lease({ leaseMs: 4000 });
    expect(await q.getJob(id)).toMatchObject({ state: 'working', leaseDeadline: l!.deadline, dequeues: 1 });
  });

  test('delayed, with runAt', async () => {
    const q = res.queue();
    const obs = res.client();
    const t0 = await redisNow(obs);
    const { id } = await q.add('x', { delayMs: 5000 });
    const t1 = await redisNow(obs);
    const info = await q.getJob(id);
    expect(info!.state).toBe('delayed');
    expect(info!.runAt).toBeGreaterThanOrEqual(t0 + 5000);
    expect(info!.runAt).toBeLessThanOrEqual(t1 + 5000);
  });

  test('completed, with result, completedAt and retainedUntil (default retention 1 h)', async () => {
    const q = res.queue<string, { out: string }>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const t0 = await redisNow(obs);
    await q.ack(l!, { out: 'y' });
    const t1 = await redisNow(obs);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'completed', result: { out: 'y' }, dequeues: 1, failures: 0 });
    expect(info!.completedAt).toBeGreaterThanOrEqual(t0);
    expect(info!.completedAt).toBeLessThanOrEqual(t1);
    expect(info!.retainedUntil! - info!.completedAt!).toBe(3_600_000);
    expect(info!.leaseDeadline).toBeUndefined();
  });

  test('dead, with lastError and diedAt', async () => {
    const q = res.queue();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 1 });
    const [l] = await q.lease();
    const t0 = await redisNow(obs);
    await q.nack(l!, { error: new RangeError('out of range') });
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'dead', lastError: 'RangeError: out of range', failures: 1, dequeues: 1 });
    expect(info!.diedAt).toBeGreaterThanOrEqual(t0);
  });

  test('dequeues counts a delivery that ended in reject', async () => {
    const q = res.queue();
    const { id } = await q.add('x', { attempts: 3 });
    const [l] = await q.lease();
    await q.reject(l!, 'bad');
    // A rejected delivery is a failed attempt that ends the job at once.
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', failures: 1, dequeues: 1 });
  });

  test('counters follow a mixed history: dequeues, requeues, failures', async () => {
    const q = res.queue();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 5, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
    let [l] = await q.lease();
    await q.requeue(l!);
    [l] = await q.lease();
    await q.nack(l!, { error: 'e1' });
    [l] = await q.lease({ leaseMs: 50 });
    await untilRedisTime(obs, l!.deadline, 'the lease to run out');
    await q.sweep(); // expired: a failure
    [l] = await q.lease();
    await q.requeue(l!);
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', dequeues: 4, requeues: 2, failures: 2 });
    [l] = await q.lease();
    expect(l!.job).toMatchObject({ attempt: 3, requeues: 2 });
    expect(await q.getJob(id)).toMatchObject({ state: 'working', dequeues: 5, requeues: 2, failures: 2 });
    await q.ack(l!);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', dequeues: 5, requeues: 2, failures: 2 });
  });

  test('dequeues keeps its history across a dead-letter redrive', async () => {
    const q = res.queue();
    const { id } = await q.add('x', { attempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
    for (let i = 0; i < 2; i++) await q.nack((await q.lease())[0]!, { error: 'e' });
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', dequeues: 2 });
    await q.retryDead([id]);
    const info = await q.getJob(id);
    expect(info!.state).toBe('pending');
    expect(info!.dequeues).toBe(2);
    await q.ack((await q.lease())[0]!);
    expect((await q.getJob(id))!.dequeues).toBe(3);
  });
});

describe('counts', () => {
  test('per-state numbers and the paused flag', async () => {
    const q = res.queue();
    expect(await q.counts()).toEqual({ pending: 0, working: 0, delayed: 0, completed: 0, dead: 0, paused: false, ghosts: 0, rateLimitedMs: 0, rateLimitedGroups: 0, waitingChildren: 0 });
    await q.addBulk([{ data: 'done' }, { data: 'dead', opts: { attempts: 1 } }, { data: 'work' }]);
    const [done, dead, work] = await q.lease({ count: 3 });
    expect([done, dead, work].map((l) => l!.job.data)).toEqual(['done', 'dead', 'work']);
    await q.addBulk([{ data: 'p0' }, { data: 'p1', opts: { priority: 1 } }, { data: 'later', opts: { delayMs: 60_000 } }]);
    await q.ack(done!);
    await q.reject(dead!, 'x');
    expect(await q.counts()).toEqual({ pending: 2, working: 1, delayed: 1, completed: 1, dead: 1, paused: false, ghosts: 0, rateLimitedMs: 0, rateLimitedGroups: 0, waitingChildren: 0 });
    await q.pause();
    expect((await q.counts()).paused).toBe(true);
    expect(await q.isPaused()).toBe(true);
    await q.resume();
    expect(await q.isPaused()).toBe(false);
  });
});

describe('retention', () => {
  test('keepCompletedMs: 1000: visible until a sweep after it ends, then gone with its result', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const { id } = await q.add('x', { keepCompletedMs: 1000 });
    const [l] = await q.lease();
    await q.ack(l!, 'result');
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'completed', result: 'result' });
    expect(info!.retainedUntil! - info!.completedAt!).toBe(1000);
    expect((await q.sweep()).completedRemoved).toBe(0);
    await untilRedisTime(obs, info!.retainedUntil!, 'the end of retention');
    expect((await q.sweep()).completedRemoved).toBe(1);
    expect(await q.getJob(id)).toBeNull();
    expect((await q.counts()).completed).toBe(0);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(0);
    expect(await obs.hlen(q.keys.byName.results)).toBe(0);
  });

  test('keepCompletedMs: 0 deletes at once', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const { id } = await q.add('x', { keepCompletedMs: 0 });
    const [l] = await q.lease();
    expect(await q.ack(l!, 'result')).toBe(true);
    expect(await q.getJob(id)).toBeNull();
    expect((await q.counts()).completed).toBe(0);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(0);
    expect(await obs.hlen(q.keys.byName.results)).toBe(0);
  });

  test('queue defaults.keepCompletedMs applies; a job option overrides it', async () => {
    const q = res.queue<string>('q', { defaults: { keepCompletedMs: 0 } });
    const a = await q.add('a');
    const b = await q.add('b', { keepCompletedMs: 60_000 });
    await q.ackBatch(await q.lease({ count: 2 }));
    expect(await q.getJob(a.id)).toBeNull();
    expect((await q.getJob(b.id))!.state).toBe('completed');
  });
});
