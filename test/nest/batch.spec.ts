import { Inject, Module, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import type { TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  OnWorkerEvent,
  Process,
  Processor,
  QueueModule,
  QueueRegistry,
  RelqConfigError,
  UnrecoverableError,
  type BatchOutcome,
  type Job,
  type LeasedJob,
} from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { blockedClients } from '../support/engine-harness.js';
import { deferred, startApp, sweptAfter, waitFor } from './app-bed.js';

let redis: TestRedis;
let admin: Redis;
const apps: TestingModule[] = [];
const observers: EngineQueue[] = [];

beforeAll(async () => {
  // A private server: the round-trip test reads its command statistics.
  redis = await startRedis({ controllable: true });
  admin = redisClient(redis);
});
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
  while (observers.length) await observers.pop()!.close();
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

async function start(...imports: NonNullable<Parameters<typeof startApp>[0]['imports']>): Promise<TestingModule> {
  const app = await startApp({ imports });
  apps.push(app);
  return app;
}

const jobDefaults = { attempts: 3, backoff: { type: 'fixed' as const, delayMs: 10, jitter: 0 } };

/** An engine Queue outside the app (adding with the same job defaults as the app's). */
function observe<Data = unknown, Result = unknown>(name: string, prefix: string): EngineQueue<Data, Result> {
  const q = new EngineQueue<Data, Result>(name, { connection: redis.url, prefix, defaults: jobDefaults });
  observers.push(q as EngineQueue);
  return q;
}

const root = (prefix: string, extra: Record<string, unknown> = {}) =>
  QueueModule.forRoot({
    connection: redis.url,
    prefix,
    defaults: { job: jobDefaults, processor: { blockMs: 200 } },
    sweeper: false,
    ...extra,
  });

/** Script calls (EVAL + EVALSHA) the server ran since the last CONFIG RESETSTAT. */
async function scriptCalls(): Promise<number> {
  const info = await admin.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/cmdstat_(fcall|evalsha|eval):calls=(\d+)/g)) n += Number(m[2]);
  return n;
}

test('a batch handler gets batches of the configured size; per-job outcomes settle, failed ones are retried', async () => {
  const prefix = uniquePrefix();
  const batches: number[][] = [];
  const failedEvents: Array<{ n: number; willRetry: boolean }> = [];

  @Processor('rows')
  class RowsProcessor {
    @Process({ batch: { size: 5, waitMs: 20 } })
    insert(jobs: Array<Job<{ n: number }>>): Array<BatchOutcome<number>> {
      batches.push(jobs.map((j) => j.data.n));
      // Even rows fail on their first attempt.
      return jobs.map((j) =>
        j.data.n % 2 === 0 && j.attempt === 1 ? { ok: false, error: new Error(`row ${j.data.n} rejected`) } : { ok: true, result: j.data.n * 10 },
      );
    }

    @OnWorkerEvent('failed')
    onFailed(job: LeasedJob<{ n: number }>, _error: Error, willRetry: boolean): void {
      failedEvents.push({ n: job.data.n, willRetry });
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'rows' })], providers: [RowsProcessor] })
  class M {}

  // The jobs are there before the app starts, so the first batches are full.
  const observer = observe<{ n: number }, number>('rows', prefix);
  const added = await observer.addBulk(Array.from({ length: 12 }, (_, n) => ({ data: { n } })));
  await start(root(prefix), M);

  const results = await Promise.all(added.map((a) => observer.waitForResult(a.id, { timeoutMs: 5000 })));
  expect(results).toEqual(Array.from({ length: 12 }, (_, n) => n * 10));
  expect(batches.slice(0, 2)).toEqual([
    [0, 1, 2, 3, 4],
    [5, 6, 7, 8, 9],
  ]);
  // Then 10 and 11, and the 6 retried rows once they came due (10 ms backoff); some may join
  // the batch of 10 and 11 while it waits waitMs to fill. Never more than 5 per batch.
  expect(batches.every((b) => b.length <= 5)).toBe(true);
  expect(batches.slice(2).flat().sort((a, b) => a - b)).toEqual([0, 2, 4, 6, 8, 10, 10, 11]);
  for (const a of added) {
    const info = await observer.getJob(a.id);
    const n = (info!.data as { n: number }).n;
    expect(info).toMatchObject({ state: 'completed', failures: n % 2 === 0 ? 1 : 0 });
  }
  expect(failedEvents.sort((a, b) => a.n - b.n)).toEqual([0, 2, 4, 6, 8, 10].map((n) => ({ n, willRetry: true })));
});

test('waitMs: a batch waits that long after its first job for more', async () => {
  const prefix = uniquePrefix();
  const batches: number[][] = [];

  @Processor('gather')
  class GatherProcessor {
    @Process({ batch: { size: 10, waitMs: 1500 } })
    run(jobs: Array<Job<{ n: number }>>): void {
      batches.push(jobs.map((j) => j.data.n));
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'gather' })], providers: [GatherProcessor] })
  class M {}

  await start(root(prefix), M);
  const observer = observe<{ n: number }>('gather', prefix);
  const t0 = Date.now();
  // each job is held by the waiting batch before the next comes
  for (const n of [1, 2, 3]) {
    await observer.add({ n });
    await waitFor(async () => (await observer.counts()).working === n, 10_000, `${n} held by the batch`);
  }
  expect(batches).toEqual([]);
  await waitFor(() => batches.length === 1, 10_000, 'one batch');
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1480); // waitMs after the first job
  expect(batches).toEqual([[1, 2, 3]]);
});

test('one lease round trip per batch: leasing a batch also settles the previous one', async () => {
  const prefix = uniquePrefix();
  const seen: number[] = [];

  @Processor('trips', { heartbeat: false })
  class TripsProcessor {
    @Process({ batch: { size: 10 } })
    run(jobs: Array<Job<{ n: number }>>): void {
      seen.push(jobs.length);
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'trips' })], providers: [TripsProcessor] })
  class M {}

  const observer = observe<{ n: number }>('trips', prefix);
  const added = await observer.addBulk(Array.from({ length: 30 }, (_, n) => ({ data: { n } })));
  await admin.config('RESETSTAT');
  await start(root(prefix, { defaults: { processor: { blockMs: 5000 } } }), M);
  // (Not counts(): it is a script call too.)
  await waitFor(() => seen.length === 3, 10_000, 'three batches');
  // the call that settles the last batch comes before the loop blocks on the empty queue
  await waitFor(async () => (await blockedClients(admin)) === 1, 10_000, 'the loop blocked again');
  const calls = await scriptCalls();
  expect(seen).toEqual([10, 10, 10]);
  // 3 leases, the 2nd and 3rd settling the batch before, plus the call that settles the
  // 3rd batch and finds nothing: 4 script calls for 30 jobs (then it blocks on the empty queue).
  expect(calls).toBe(4);
  expect(await observer.counts()).toMatchObject({ completed: 30, pending: 0, working: 0 });
  expect(added).toHaveLength(30);
});

test('a throw fails every job of the batch (retried); UnrecoverableError dead-letters them all', async () => {
  const prefix = uniquePrefix();
  let calls = 0;

  @Processor('flaky')
  class FlakyProcessor {
    @Process({ batch: { size: 10, waitMs: 50 } })
    async run(jobs: Array<Job<{ poison: boolean }>>): Promise<void> {
      calls += 1;
      if (jobs.some((j) => j.data.poison)) throw new UnrecoverableError('poisoned batch');
      if (jobs[0]!.attempt === 1) throw new Error('database unavailable');
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'flaky' })], providers: [FlakyProcessor] })
  class M {}

  const observer = observe<{ poison: boolean }>('flaky', prefix);
  const good = await observer.addBulk(Array.from({ length: 4 }, () => ({ data: { poison: false } })));
  await start(root(prefix), M);
  for (const g of good) await observer.waitForResult(g.id, { timeoutMs: 5000 });
  for (const g of good) expect(await observer.getJob(g.id)).toMatchObject({ state: 'completed', failures: 1 });
  expect(calls).toBe(2);

  const bad = await observer.addBulk([{ data: { poison: true } }, { data: { poison: false } }]);
  await waitFor(async () => (await observer.counts()).dead === 2, 3000, 'both dead-lettered');
  for (const b of bad) expect(await observer.getJob(b.id)).toMatchObject({ state: 'dead', lastError: expect.stringMatching(/poisoned batch/) });
});

test('a named batch handler gets only its jobs; others are dead-lettered with the reason', async () => {
  const prefix = uniquePrefix();
  const got: string[][] = [];

  @Processor('notify')
  class SmsProcessor {
    @Process('sms', { batch: { size: 10, waitMs: 20 } })
    send(jobs: Array<Job<{ to: string }>>): Array<BatchOutcome<string>> {
      got.push(jobs.map((j) => j.data.to));
      return jobs.map((j) => (j.data.to === 'bad' ? { ok: false, error: 'no such number', retry: false } : { ok: true, result: `sent ${j.data.to}` }));
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'notify' })], providers: [SmsProcessor] })
  class M {}

  const observer = observe<{ to: string }, string>('notify', prefix);
  const [a, email, b, bad] = await observer.addBulk([
    { data: { to: 'a' }, opts: { name: 'sms' } },
    { data: { to: 'x@y' }, opts: { name: 'email' } },
    { data: { to: 'b' }, opts: { name: 'sms' } },
    { data: { to: 'bad' }, opts: { name: 'sms' } },
  ]);
  await start(root(prefix), M);
  expect(await observer.waitForResult(a!.id, { timeoutMs: 3000 })).toBe('sent a');
  expect(await observer.waitForResult(b!.id, { timeoutMs: 3000 })).toBe('sent b');
  await waitFor(async () => (await observer.counts()).dead === 2, 3000, 'email and bad dead-lettered');
  expect(got).toEqual([['a', 'b', 'bad']]);
  expect(await observer.getJob(email!.id)).toMatchObject({ state: 'dead', failures: 1 });
  expect((await observer.getJob(email!.id))!.lastError).toMatch(
    /no handler for job name 'email' in SmsProcessor \(queue 'notify'\): its batch handler takes only jobs named 'sms'/,
  );
  expect(await observer.getJob(bad!.id)).toMatchObject({ state: 'dead', lastError: 'no such number' });
});

test('batches run longer than their lease stay leased (heartbeat); concurrency runs batches in parallel; status shows them', async () => {
  const prefix = uniquePrefix();
  const release = deferred();
  let running = 0;
  let most = 0;
  const LEASE_MS = 600;

  @Processor('slow', { leaseMs: LEASE_MS })
  class SlowProcessor {
    @Process({ batch: { size: 2 }, concurrency: 2 })
    async run(jobs: Array<Job<unknown>>): Promise<void> {
      running += 1;
      most = Math.max(most, running);
      await release.promise;
      if (jobs.some((j) => j.signal.aborted)) throw new Error('lease lost');
      running -= 1;
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'slow' })], providers: [SlowProcessor] })
  class M {}

  const observer = observe('slow', prefix);
  const added = await observer.addBulk(Array.from({ length: 4 }, () => ({ data: {} })));
  const app = await start(root(prefix, { sweeper: { intervalMs: 100 } }), M);
  await waitFor(() => running === 2, 3000, 'two batches running');
  const [status] = app.get(QueueRegistry).getProcessors();
  expect(status).toMatchObject({
    processor: 'SlowProcessor',
    state: 'busy',
    concurrency: 2,
    inFlight: 4,
    handlers: [{ method: 'run', jobName: null, concurrency: 2, active: 4, waiting: 0, batch: { size: 2, waitMs: 0, running: 2 } }],
  });
  try {
    // Held until a sweep (every ~100 ms) that began two more lease lengths after the first
    // deadline, checking on every poll that no job was reclaimed meanwhile.
    const first = Math.max(...(await Promise.all(added.map(async (a) => (await observer.getJob(a.id))!.leaseDeadline!))));
    const seen = new Set<string>();
    await sweptAfter(app.get(QueueRegistry), 'slow', first + 2 * LEASE_MS, async () => {
      for (const a of added) {
        const info = await observer.getJob(a.id);
        seen.add(`${info?.state} failures=${info?.failures}`);
      }
    });
    expect([...seen]).toEqual(['working failures=0']);
  } finally {
    release.resolve();
  }
  await waitFor(async () => (await observer.counts()).completed === 4, 10_000, 'all completed');
  expect(most).toBe(2);
  for (const a of added) expect(await observer.getJob(a.id)).toMatchObject({ failures: 0, dequeues: 1 });
  // Both lanes idle now share one blocking connection: admin, observer, the app's shared one,
  // it, and the queue's cancel notices (docs/nest.md, Connections).
  await waitFor(async () => (await blockedClients(admin)) === 1, 10_000, 'a lane blocked on the empty queue');
  const list = String(await admin.client('LIST')).trim().split('\n');
  expect(list.filter((c) => c.includes('cmd=blpop'))).toHaveLength(1);
  expect(list.filter((c) => c.includes('cmd=ssubscribe'))).toHaveLength(1);
  expect(list).toHaveLength(5);
});

test('shutdown gives a batch that does not finish within drainTimeoutMs back to pending at once', async () => {
  const prefix = uniquePrefix();
  const started = deferred();

  @Processor('stuck', { drainTimeoutMs: 200, leaseMs: 30_000 })
  class StuckProcessor {
    @Process({ batch: { size: 3 } })
    async run(jobs: Array<Job<unknown>>): Promise<void> {
      started.resolve();
      await new Promise((_, reject) => jobs[0]!.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'stuck' })], providers: [StuckProcessor] })
  class M {}

  const observer = observe('stuck', prefix);
  const added = await observer.addBulk(Array.from({ length: 3 }, () => ({ data: {} })));
  const app = await start(root(prefix), M);
  await started.promise;
  const t0 = Date.now();
  await app.close();
  apps.length = 0;
  expect(Date.now() - t0).toBeLessThan(10_000); // the 200 ms drain and the give-back, not the 30 s lease
  for (const a of added) expect(await observer.getJob(a.id)).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });
});

test('a request-scoped batch processor gets an instance per batch, with the Job[] as REQUEST', async () => {
  const prefix = uniquePrefix();
  let instances = 0;
  const seen: Array<{ instance: number; same: boolean; size: number }> = [];

  @Processor('scoped', { scope: Scope.REQUEST })
  class ScopedBatch {
    private readonly n = ++instances;
    constructor(@Inject(REQUEST) private readonly batch: Array<Job<unknown>>) {}

    @Process({ batch: { size: 2 } })
    run(jobs: Array<Job<unknown>>): void {
      seen.push({ instance: this.n, same: this.batch === jobs, size: jobs.length });
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'scoped' })], providers: [ScopedBatch] })
  class M {}

  const observer = observe('scoped', prefix);
  await observer.addBulk(Array.from({ length: 4 }, () => ({ data: {} })));
  await start(root(prefix), M);
  await waitFor(() => seen.length === 2, 3000, 'two batches');
  expect(seen).toEqual([
    { instance: 1, same: true, size: 2 },
    { instance: 2, same: true, size: 2 },
  ]);
});

describe('bootstrap errors for batch handlers', () => {
  async function bootError(cls: new () => object, queue: string): Promise<Error> {
    @Module({ imports: [QueueModule.registerQueue({ name: queue })], providers: [cls] })
    class M {}
    try {
      const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url }), M] });
      await app.close();
    } catch (err) {
      return err as Error;
    }
    throw new Error('the app started, but an error was expected');
  }

  test('a batch handler next to another handler', async () => {
    @Processor('mixed')
    class Mixed {
      @Process({ batch: { size: 10 } })
      many(): void {}
      @Process('one')
      one(): void {}
    }
    const err = await bootError(Mixed, 'mixed');
    expect(err).toBeInstanceOf(RelqConfigError);
    expect(err.message).toMatch(
      /@Processor\('mixed'\) Mixed: Mixed\.many is a batch handler \(@Process\(\{ batch \}\)\), so it must be the processor's only @Process\(\) method, but there is also Mixed\.one/,
    );
  });

  test.each([
    [{ batch: { size: 0 } }, /Sized\.run @Process\(\): batch\.size: must be between 1 and 1000, got 0/],
    [{ batch: { size: 1001 } }, /batch\.size: must be between 1 and 1000, got 1001/],
    [{ batch: { size: 10, waitMs: -1 } }, /batch\.waitMs: must be between 0/],
    [{ batch: { size: 10, wait: 5 } }, /batch: unknown option 'wait' \(known: size, waitMs\)/],
    [{ batch: 10 }, /batch: must be an object, got/],
    [{ batch: { size: 10 }, concurrency: 0 }, /concurrency: must be between 1 and 64, got 0/],
    [{ batch: { size: 10 }, concurrency: 65 }, /concurrency: must be between 1 and 64, got 65/],
  ])('%j', async (options, message) => {
    @Processor('sized')
    class Sized {
      @Process(options as never)
      run(): void {}
    }
    const err = await bootError(Sized, 'sized');
    expect(err).toBeInstanceOf(RelqConfigError);
    expect(err.message).toMatch(message);
  });
});
