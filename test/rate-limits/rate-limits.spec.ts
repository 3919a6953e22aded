/**
 * Rate limits, enforced by the lease script for every worker of a queue: per queue
 * (`limiter`), per group (`groupLimiter`), and the holds a handler asks for when it meets an
 * upstream limit (`job.rateLimit`, `RateLimitError`). Black box, on a private redis-server;
 * lease times are Redis times (`job.leasedAt`).
 */
import { RateLimitError, ValidationError, Worker, type Job, type RateLimit, type WorkerEvent } from '../../lib/index.js';
import { windows } from './limiter-windows.js';
import { commandStats, redisNow, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

test('a queue limiter holds every worker of the queue to max leases per window', async () => {
  const limiter: RateLimit = { max: 4, durationMs: 600 };
  const q = res.queue<number>('limited', { limiter });
  const leasedAt: number[] = [];
  for (let i = 0; i < 3; i++) {
    res.worker(new Worker<number>(res.twin<number>(q, { limiter }), async (job) => void leasedAt.push(job.leasedAt), { concurrency: 4 }));
  }
  await q.addBulk(Array.from({ length: 16 }, (_, data) => ({ data })));
  await waitUntil(async () => (await q.counts()).completed === 16, 'every job done', 20_000);
  const counts = windows(leasedAt, limiter.durationMs);
  expect(Math.max(...counts)).toBeLessThanOrEqual(limiter.max);
  expect(counts.length).toBeGreaterThanOrEqual(4);
  expect(Math.max(...leasedAt) - Math.min(...leasedAt)).toBeGreaterThanOrEqual(3 * limiter.durationMs);
});

test('while the window is spent, idle workers send Redis nothing: they wait for its end', async () => {
  const limiter: RateLimit = { max: 1, durationMs: 4000 };
  const q = res.queue<number>('quiet', { limiter });
  const obs = res.client();
  let done = 0;
  for (let i = 0; i < 3; i++) res.worker(new Worker<number>(res.twin<number>(q, { limiter }), async () => void (done += 1), { concurrency: 4 }));
  await q.addBulk([{ data: 1 }, { data: 2 }]);
  await waitUntil(() => done === 1, 'the one job the window allows');
  await new Promise((r) => setTimeout(r, 300)); // the settle of that job and the last lease calls land
  const before = await commandStats(obs);
  await new Promise((r) => setTimeout(r, 1500)); // the measured interval, inside the 4 s window
  const d = statsDelta(before, await commandStats(obs));
  expect({ fcall: d.fcall ?? 0, blpop: d.blpop ?? 0 }).toEqual({ fcall: 0, blpop: 0 });
  await waitUntil(() => done === 2, 'the second job, in the next window', 10_000);
});

test('counts() shows a spent window, and a worker idle in it leases as soon as it ends', async () => {
  const limiter: RateLimit = { max: 1, durationMs: 1500 };
  const q = res.queue<string>('one-per-window', { limiter });
  const obs = res.client();
  const leasedAt: Record<string, number> = {};
  res.worker(new Worker<string>(q, async (job) => void (leasedAt[job.data] = job.leasedAt)));
  await q.add('first');
  await waitUntil(() => leasedAt.first !== undefined, 'the first job');
  await q.add('second');
  const c = await q.counts();
  expect(c.rateLimitedMs).toBeGreaterThan(0);
  expect(c.rateLimitedMs).toBeLessThanOrEqual(limiter.durationMs);
  await waitUntil(() => leasedAt.second !== undefined, 'the second job, once the window ended', 10_000);
  expect(leasedAt.second! - leasedAt.first!).toBeGreaterThanOrEqual(limiter.durationMs);
  // woken by the end of the window, not a poll interval later
  expect(leasedAt.second! - leasedAt.first!).toBeLessThan(limiter.durationMs + 1000);
  // the second lease spent the next window
  expect((await q.counts()).rateLimitedMs).toBeGreaterThan(0);
  expect(await redisNow(obs)).toBeGreaterThan(leasedAt.second!);
});

test('a group limiter holds each group to its own window; the other groups go on', async () => {
  const groupLimiter: RateLimit = { max: 2, durationMs: 1000 };
  const q = res.queue<string>('fair', { groupLimiter });
  const byGroup: Record<string, number[]> = { a: [], b: [] };
  await q.addBulk([...Array.from({ length: 6 }, () => ({ data: 'a', opts: { group: 'a' } })), ...Array.from({ length: 6 }, () => ({ data: 'b', opts: { group: 'b' } }))]);
  await q.add('plain');
  let plainAt = 0;
  res.worker(
    new Worker<string>(
      q,
      async (job) => {
        if (job.data === 'plain') plainAt = job.leasedAt;
        else byGroup[job.data]!.push(job.leasedAt);
      },
      { concurrency: 10 },
    ),
  );
  await waitUntil(async () => (await q.counts()).rateLimitedGroups === 2, 'both groups waiting for their windows');
  await waitUntil(async () => (await q.counts()).completed === 13, 'every job done', 20_000);
  for (const g of ['a', 'b']) {
    const counts = windows(byGroup[g]!, groupLimiter.durationMs);
    expect({ g, most: Math.max(...counts), windows: counts.length }).toEqual({ g, most: 2, windows: 3 });
  }
  // the ungrouped job was not held back by the groups' limits
  expect(plainAt).toBeLessThan(Math.max(...byGroup.a!));
});

test('job.rateLimit(ms) puts the job back at the head without a failed attempt and holds back the queue', async () => {
  const q = res.queue<string, string>('upstream');
  const events: Array<WorkerEvent<string, string>> = [];
  const leasedAt: Array<[string, number]> = [];
  let calls = 0;
  const w = res.worker(
    new Worker<string, string>(q, async (job: Job<string>) => {
      leasedAt.push([job.data, job.leasedAt]);
      if (job.data === 'first' && ++calls === 1) job.rateLimit(800); // the upstream said 429
      return job.data;
    }),
  );
  w.events.subscribe((e) => events.push(e));
  const first = await q.add('first');
  await waitUntil(() => events.some((e) => e.type === 'rateLimited'), 'the rate-limited event');
  const second = await q.add('second');
  expect(await q.waitForResult(first.id, { timeoutMs: 10_000 })).toBe('first');
  expect(await q.waitForResult(second.id, { timeoutMs: 10_000 })).toBe('second');
  // the held-back job went first once the hold ended, and no failure was counted
  expect(leasedAt.map(([d]) => d)).toEqual(['first', 'first', 'second']);
  expect(leasedAt[1]![1] - leasedAt[0]![1]).toBeGreaterThanOrEqual(800);
  expect(await q.getJob(first.id)).toMatchObject({ failures: 0, state: 'completed' });
  expect(events.find((e) => e.type === 'rateLimited')).toMatchObject({ type: 'rateLimited', delayMs: 800 });
  expect(events.some((e) => e.type === 'failed')).toBe(false);
});

test('a RateLimitError thrown for a grouped job holds back its group only; scope queue holds back everything', async () => {
  const q = res.queue<string>('groups');
  const done: Array<[string, number]> = [];
  let thrown = 0;
  res.worker(
    new Worker<string>(
      q,
      async (job) => {
        if (job.data === 'a1' && thrown++ === 0) throw new RateLimitError(1000);
        done.push([job.data, job.leasedAt]);
      },
      { concurrency: 1 },
    ),
  );
  await q.addBulk([
    { data: 'a1', opts: { group: 'a' } },
    { data: 'a2', opts: { group: 'a' } },
    { data: 'b1', opts: { group: 'b' } },
    { data: 'b2', opts: { group: 'b' } },
  ]);
  await waitUntil(() => done.length === 4, 'all four', 10_000);
  const order = done.map(([d]) => d);
  // b ran while a was held; a's jobs ran after, in their order
  expect(order.slice(0, 2)).toEqual(['b1', 'b2']);
  expect(order.slice(2)).toEqual(['a1', 'a2']);
  const info = (await q.getJobs('completed')).find((j) => j.data === 'a1');
  expect(info).toMatchObject({ failures: 0 });

  const held = res.queue<string>('whole');
  const got: string[] = [];
  let once = 0;
  res.worker(
    new Worker<string>(held, async (job) => {
      if (job.data === 'x' && once++ === 0) throw new RateLimitError(800, { scope: 'queue' });
      got.push(job.data);
    }),
  );
  const t0 = await redisNow(res.client());
  await held.add('x', { group: 'g1' });
  await waitUntil(async () => (await held.counts()).rateLimitedMs > 0, 'the queue held');
  await held.add('y', { group: 'g2' });
  await waitUntil(() => got.length === 2, 'both jobs', 10_000);
  expect(got).toEqual(['x', 'y']);
  expect((await redisNow(res.client())) - t0).toBeGreaterThanOrEqual(800);
});

test('queue.rateLimit on a lease: false for a stale lease; bad delays and scopes are refused before anything is written', async () => {
  const q = res.queue<number>();
  await q.add(1);
  const [l] = await q.lease();
  for (const bad of [0, -5, 1.5, '100', 2 ** 31]) {
    await expect(q.rateLimit(l!, bad as never)).rejects.toBeInstanceOf(ValidationError);
  }
  await expect(q.rateLimit(l!, 100, { scope: 'group' as never })).rejects.toThrow(/scope/);
  await expect(q.rateLimit(l!, 100, { other: 1 } as never)).rejects.toThrow(/other/);
  expect((await q.counts()).working).toBe(1);
  expect(await q.rateLimit(l!, 100)).toBe(true);
  expect(await q.rateLimit(l!, 100)).toBe(false); // no longer its lease
  expect(await q.counts()).toMatchObject({ pending: 1, working: 0 });
  expect((await q.getJob(l!.job.id))!.failures).toBe(0);
});

test('limiter options are checked when the Queue is made', () => {
  for (const bad of [{ max: 0, durationMs: 100 }, { max: 1.5, durationMs: 100 }, { max: 5 }, { max: 5, durationMs: 0 }, { max: 5, durationMs: 100, per: 'x' }, 5]) {
    expect(() => res.queue('bad', { limiter: bad as never })).toThrow(ValidationError);
    expect(() => res.queue('bad', { groupLimiter: bad as never })).toThrow(ValidationError);
  }
});

test('a stored limiter is removed with { max: 0, durationMs: 0 } and queueState() shows what is stored', async () => {
  const q = res.queue<number>('stored', { limiter: { max: 3, durationMs: 1000 }, groupLimiter: { max: 1, durationMs: 500 } });
  await q.add(1);
  expect(await q.queueState()).toMatchObject({ limiter: { max: 3, durationMs: 1000 }, groupLimiter: { max: 1, durationMs: 500 } });
  const lifted = res.twin<number>(q, { limiter: { max: 0, durationMs: 0 } });
  await lifted.add(2);
  expect((await q.queueState()).limiter).toBeUndefined();
});
