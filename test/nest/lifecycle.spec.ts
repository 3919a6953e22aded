import { Module } from '@nestjs/common';
import { Process, Processor, QueueModule, QueueRegistry, type Job } from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { deferred, sleep, waitFor, useApps } from './helpers.js';

const bed = useApps();
const { apps, start } = bed;

test('a handler running longer than its lease stays leased thanks to the heartbeat', async () => {
  const prefix = uniquePrefix();
  const started = deferred<string>();
  let runs = 0;

  @Processor('long', { leaseMs: 300 })
  class LongProcessor {
    @Process()
    async run(job: Job<unknown>): Promise<string> {
      runs += 1;
      started.resolve(job.id);
      await sleep(1200); // four leases long
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
  await started.promise;
  // Meanwhile the sweeper runs every ~100 ms and would reclaim an expired lease.
  const deadlines = new Set<number>();
  for (let i = 0; i < 8; i++) {
    const info = await queue.getJob(id);
    expect(info?.state).toBe('working');
    deadlines.add(info!.leaseDeadline!);
    await sleep(120);
  }
  expect(deadlines.size).toBeGreaterThan(1); // renewed
  expect(await queue.waitForResult(id, { timeoutMs: 3000 })).toBe('done');
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
  expect(closeMs).toBeLessThan(2000); // drain 300 ms + give-back, not the 30 s lease

  const observer = new EngineQueue<{ n: number }, string>('reports', { connection: bed.redis.url, prefix });
  try {
    const info = await observer.getJob(id);
    expect(info).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });
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
    QueueModule.forRoot({ connection: bed.redis.url, prefix, shutdown: { drainTimeoutMs: 3000 }, defaults: { processor: { blockMs: 200 } } }),
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
    await waitFor(async () => (await crashed.getJob(a.id))?.state === 'pending', 3000, 'swept back to pending');
    expect(await crashed.getJob(a.id)).toMatchObject({ failures: 1 });
    await sleep(300);
    expect((await other.getJob(b.id))?.state).toBe('working');

    const sweepers = app.get(QueueRegistry).getSweepers();
    expect(sweepers.find((s) => s.queue === 'swept')).toMatchObject({ enabled: true, running: true });
    expect(sweepers.find((s) => s.queue === 'swept')!.lastRunAt).not.toBeNull();
    expect(sweepers.find((s) => s.queue === 'unswept')).toMatchObject({ enabled: false, running: false, lastRunAt: null });
  } finally {
    await crashed.close();
    await other.close();
  }
});
