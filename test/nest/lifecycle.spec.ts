import { Module } from '@nestjs/common';
import { LeaseLostError, Process, Processor, QueueModule, QueueRegistry, type Job } from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { deferred, sleep, sweptAfter, waitFor, useApps } from './app-bed.js';

const bed = useApps();
const { apps, start } = bed;

test('a handler running longer than its lease stays leased thanks to the heartbeat', async () => {
  const prefix = uniquePrefix();
  const started = deferred<string>();
  const release = deferred();
  let runs = 0;
  const LEASE_MS = 600;

  @Processor('long', { leaseMs: LEASE_MS })
  class LongProcessor {
    @Process()
    async run(job: Job<unknown>): Promise<string> {
      runs += 1;
      started.resolve(job.id);
      await release.promise; // held until the test has seen the lease outlive its length
      if (job.signal.aborted) throw new Error('lease was lost');
      return 'done';
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'long' })], providers: [LongProcessor] })
  class M {}

  const app = await start(
    QueueModule.forRoot({ connection: bed.redis.url, prefix, defaults: { processor: { blockMs: 200 } }, sweeper: { intervalMs: 100 } }),
    M,
  );
  const queue = app.get(QueueRegistry).getQueue('long');
  const { id } = await queue.add({});
  try {
    await started.promise;
    const first = await queue.getJob(id);
    expect(first?.state).toBe('working');
    // Without renewal the lease would end at first.leaseDeadline, and the sweeper (every
    // ~100 ms) would reclaim it. Hold the handler until a whole lease length later and a
    // sweep that began after that, checking on every poll that the job stays leased.
    const deadlines = new Set<number>([first!.leaseDeadline!]);
    const seen = new Set<string>();
    await sweptAfter(app.get(QueueRegistry), 'long', first!.leaseDeadline! + LEASE_MS, async () => {
      const info = await queue.getJob(id);
      seen.add(`${info?.state} failures=${info?.failures} dequeues=${info?.dequeues}`);
      if (info?.leaseDeadline !== undefined) deadlines.add(info.leaseDeadline);
    });
    expect([...seen]).toEqual(['working failures=0 dequeues=1']); // never reclaimed meanwhile
    expect(deadlines.size).toBeGreaterThan(2); // renewed, more than once
  } finally {
    release.resolve();
  }
  expect(await queue.waitForResult(id, { timeoutMs: 10_000 })).toBe('done');
  expect(runs).toBe(1);
  const info = await queue.getJob(id);
  expect(info).toMatchObject({ state: 'completed', failures: 0 });
});

test('shutdown during a long job gives it back to pending at once; the next app instance completes it', async () => {
  const prefix = uniquePrefix();
  const started = deferred<string>();
  let aborted: unknown;

  @Processor('reports', { leaseMs: 30_000 })
  class SlowReports {
    @Process()
    async run(job: Job<{ n: number }>): Promise<string> {
      started.resolve(job.id);
      // A well-behaved long handler stops when its signal aborts.
      await new Promise<void>((_, reject) => {
        job.signal.addEventListener('abort', () => {
          aborted = job.signal.reason;
          reject(job.signal.reason as Error);
        });
      });
      return 'never';
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'reports' })], providers: [SlowReports] })
  class First {}

  const root = () =>
    QueueModule.forRoot({
      connection: bed.redis.url,
      prefix,
      shutdown: { drainTimeoutMs: 300 },
      defaults: { processor: { blockMs: 200 } },
    });
  const app = await start(root(), First);
  const queue = app.get(QueueRegistry).getQueue<{ n: number }, string>('reports');
  const { id } = await queue.add({ n: 1 });
  await started.promise;

  const t0 = Date.now();
  await app.close();
  apps.length = 0;
  const closeMs = Date.now() - t0;
  expect(closeMs).toBeLessThan(10_000); // drain 300 ms + give-back, not the 30 s lease

  const observer = new EngineQueue<{ n: number }, string>('reports', { connection: bed.redis.url, prefix });
  try {
    const info = await observer.getJob(id);
    expect(info).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });
    expect(aborted).toBeInstanceOf(LeaseLostError);
    expect(String(aborted)).toMatch(/shutting down/);

    @Processor('reports')
    class FastReports {
      @Process()
      run(job: Job<{ n: number }>): string {
        return `report ${job.data.n} on attempt ${job.attempt}`;
      }
    }
    @Module({ imports: [QueueModule.registerQueue({ name: 'reports' })], providers: [FastReports] })
    class Second {}

    await start(root(), Second);
    expect(await observer.waitForResult(id, { timeoutMs: 3000 })).toBe('report 1 on attempt 1');
  } finally {
    await observer.close();
  }
});

test('a handler that finishes within the drain timeout is acked during shutdown', async () => {
  const prefix = uniquePrefix();
  const started = deferred();

  @Processor('drain')
  class DrainProcessor {
    @Process()
    async run(): Promise<string> {
      started.resolve();
      await sleep(300);
      return 'finished';
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'drain' })], providers: [DrainProcessor] })
  class M {}

  const app = await start(
    QueueModule.forRoot({ connection: bed.redis.url, prefix, shutdown: { drainTimeoutMs: 10_000 }, defaults: { processor: { blockMs: 200 } } }),
    M,
  );
  const queue = app.get(QueueRegistry).getQueue('drain');
  const { id } = await queue.add({});
  await started.promise;
  await app.close();
  apps.length = 0;
  const observer = new EngineQueue('drain', { connection: bed.redis.url, prefix });
  try {
    expect(await observer.getJob(id)).toMatchObject({ state: 'completed', result: 'finished' });
  } finally {
    await observer.close();
  }
});

test('the sweeper reclaims leases that expired elsewhere; it can be disabled', async () => {
  const prefix = uniquePrefix();
  // A crashed consumer: leased with a short lease and never settled.
  const crashed = new EngineQueue('swept', { connection: bed.redis.url, prefix });
  const other = new EngineQueue('unswept', { connection: bed.redis.url, prefix });
  try {
    const a = await crashed.add({}, { attempts: 5 });
    const b = await other.add({}, { attempts: 5 });
    await crashed.lease({ leaseMs: 50 });
    await other.lease({ leaseMs: 50 });

    const app = await start(
      QueueModule.forRoot({ connection: bed.redis.url, prefix, sweeper: { intervalMs: 100, jitter: 0.5 } }),
      QueueModule.registerQueue({ name: 'swept' }, { name: 'unswept', sweeper: false }),
    );
    await waitFor(async () => (await crashed.getJob(a.id))?.state === 'pending', 10_000, 'swept back to pending');
    expect(await crashed.getJob(a.id)).toMatchObject({ failures: 1 });
    // b's lease has run out too; a sweep of 'swept' that began after that proves the app's
    // sweeping went on past the point where a sweeper of 'unswept' would have taken b.
    const bDeadline = (await other.getJob(b.id))!.leaseDeadline!;
    const states = new Set<string | undefined>();
    await sweptAfter(app.get(QueueRegistry), 'swept', bDeadline + 300, async () => {
      states.add((await other.getJob(b.id))?.state);
    });
    expect([...states]).toEqual(['working']);

    const sweepers = app.get(QueueRegistry).getSweepers();
    expect(sweepers.find((s) => s.queue === 'swept')).toMatchObject({ enabled: true, running: true });
    expect(sweepers.find((s) => s.queue === 'swept')!.lastRunAt).not.toBeNull();
    expect(sweepers.find((s) => s.queue === 'unswept')).toMatchObject({ enabled: false, running: false, lastRunAt: null });
  } finally {
    await crashed.close();
    await other.close();
  }
});
