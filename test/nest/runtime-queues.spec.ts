/**
 * Queues made at run time (QueueRegistry.addQueue / addProcessor / addQueueListener /
 * removeQueue) against a real Redis: they run as declared ones do (processed with their
 * options and named handlers, listeners called, swept, in the health check and on the
 * dashboard, drained on app.close()), removeQueue drains and leaves no connection behind, and
 * a wrong call creates nothing.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  AlreadyRegisteredError,
  OnQueueEvent,
  OnWorkerEvent,
  Process,
  Processor,
  QueueHealthService,
  QueueModule,
  QueueRegistry,
  RelqConfigError,
  type Job,
} from '../../lib/nest/index.js';
import { Queue as EngineQueue, PartitionedQueue } from '../../lib/index.js';
import { RelqDashboardModule } from '../../lib/dashboard/nest/index.js';
import type { QueueOverview } from '../../lib/dashboard/index.js';
import { uniquePrefix } from '../support/redis.js';
import { deferred, useApps, waitFor } from './app-bed.js';

const bed = useApps();

const root = (prefix = uniquePrefix()) =>
  QueueModule.forRoot({
    connection: bed.redis.url,
    prefix,
    shutdown: { drainTimeoutMs: 5000 },
    defaults: { processor: { blockMs: 200 } },
    sweeper: { intervalMs: 200 },
  });

/** Connections the Redis server has, but `admin`'s own. */
async function connections(admin: Redis): Promise<string[]> {
  const own = `id=${String(await admin.client('ID'))} `;
  return String(await admin.client('LIST'))
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith(own));
}

/** An undecorated tenant processor: named handlers and worker events, as a @Processor class has. */
class TenantWork {
  readonly completed: string[] = [];
  @Process('invoice', { concurrency: 2 })
  invoice(job: Job<{ n: number }>): string {
    return `invoice ${job.data.n}`;
  }
  @Process('receipt')
  receipt(job: Job<{ n: number }>): string {
    return `receipt ${job.data.n}`;
  }
  @OnWorkerEvent('completed')
  done(job: Job<{ n: number }>, result: string): void {
    this.completed.push(`${job.name}: ${result}`);
  }
}

class TenantEvents {
  readonly added: string[] = [];
  @OnQueueEvent('added')
  onAdded({ jobId }: { jobId: string }): void {
    this.added.push(jobId);
  }
}

test('a queue added after bootstrap is processed, heard, swept and in the health check, until removed', async () => {
  @Module({ imports: [QueueModule.registerQueue({ name: 'declared' })] })
  class M {}
  const app = await bed.start(root(), M);
  const registry = app.get(QueueRegistry);

  const queue = await registry.addQueue<{ n: number }, string>('tenant-a', { defaults: { job: { attempts: 2 } } });
  expect(registry.getQueue('tenant-a')).toBe(queue);
  expect(registry.getQueueNames()).toEqual(['declared', 'tenant-a']);
  const work = new TenantWork();
  await registry.addProcessor('tenant-a', work, { leaseMs: 5000 });
  const events = new TenantEvents();
  await registry.addQueueListener('tenant-a', events);

  const a = await queue.add({ n: 1 }, { name: 'invoice' });
  const b = await queue.add({ n: 2 }, { name: 'receipt' });
  expect(await queue.waitForResult(a.id, { timeoutMs: 5000 })).toBe('invoice 1');
  expect(await queue.waitForResult(b.id, { timeoutMs: 5000 })).toBe('receipt 2');
  await waitFor(() => work.completed.length === 2, 5000, 'the completed events');
  expect(work.completed.sort()).toEqual(['invoice: invoice 1', 'receipt: receipt 2']);
  await waitFor(() => events.added.length === 2, 5000, 'the added events');
  expect(events.added.sort()).toEqual([a.id, b.id].sort());

  // A function is the default handler, with the processor's options.
  const plain = await registry.addQueue<number, number>('tenant-b');
  await registry.addProcessor<number, number>('tenant-b', (job) => job.data * 2, { concurrency: 3 });
  expect(await plain.waitForResult((await plain.add(21)).id, { timeoutMs: 5000 })).toBe(42);

  const processors = registry.getProcessors();
  expect(processors.find((p) => p.queue === 'tenant-a')).toMatchObject({ processor: 'TenantWork', concurrency: 3, alive: true });
  expect(processors.find((p) => p.queue === 'tenant-a')!.handlers.map((h) => [h.jobName, h.concurrency])).toEqual([
    ['invoice', 2],
    ['receipt', 1],
  ]);
  expect(processors.find((p) => p.queue === 'tenant-b')).toMatchObject({ processor: 'handler', concurrency: 3 });
  await waitFor(() => registry.getSweepers().find((s) => s.queue === 'tenant-a')?.lastRunAt, 5000, 'a sweep of tenant-a');
  const report = await app.get(QueueHealthService).check();
  expect(report.healthy).toBe(true);
  expect(Object.keys(report.queues).sort()).toEqual(['declared', 'tenant-a', 'tenant-b']);
  expect(report.queues['tenant-a']!.processors.map((p) => p.processor)).toEqual(['TenantWork']);
  expect(report.queues['tenant-a']!.sweeper).toMatchObject({ running: true, healthy: true });

  await registry.removeQueue('tenant-a');
  expect(registry.hasQueue('tenant-a')).toBe(false);
  expect(registry.getProcessors().map((p) => p.queue)).toEqual(['tenant-b']);
  expect(registry.getSweepers().map((s) => s.queue).sort()).toEqual(['declared', 'tenant-b']);
  expect(Object.keys((await app.get(QueueHealthService).check()).queues).sort()).toEqual(['declared', 'tenant-b']);
  // Its jobs stay in Redis; the name can be added again.
  const again = await registry.addQueue<{ n: number }, string>('tenant-a');
  expect(await again.getJob(a.id)).toMatchObject({ state: 'completed', result: 'invoice 1' });
});

test('removeQueue lets a running job finish, then nothing of the queue runs: no loop, no connection', async () => {
  const prefix = uniquePrefix();
  const app = await bed.start(root(prefix));
  const registry = app.get(QueueRegistry);
  const admin = new Redis(bed.redis.url);
  try {
    const before = (await connections(admin)).length;
    const queue = await registry.addQueue<number, string>('tenant-c');
    const started = deferred();
    const release = deferred();
    await registry.addProcessor<number, string>('tenant-c', async (job) => {
      started.resolve();
      await release.promise;
      return `done ${job.data}`;
    });
    const events = new TenantEvents();
    await registry.addQueueListener('tenant-c', events);
    const { id } = await queue.add(1);
    await started.promise;
    expect((await connections(admin)).length).toBeGreaterThan(before);

    let removed = false;
    const removal = registry.removeQueue('tenant-c', { drainTimeoutMs: 10_000 }).then(() => (removed = true));
    // The name stays registered while it drains; a second call shares the removal.
    expect(registry.hasQueue('tenant-c')).toBe(true);
    await waitFor(() => registry.getProcessors()[0]?.inFlight === 1, 2000, 'the job in flight');
    expect(removed).toBe(false);
    release.resolve();
    await Promise.all([removal, registry.removeQueue('tenant-c')]);
    expect(registry.hasQueue('tenant-c')).toBe(false);
    expect(registry.getProcessors()).toEqual([]);
    expect(registry.getSweepers()).toEqual([]);
    await expect(queue.add(2)).rejects.toThrow(/closed/);

    const observer = new EngineQueue<number, string>('tenant-c', { connection: bed.redis.url, prefix });
    try {
      expect(await observer.getJob(id)).toMatchObject({ state: 'completed', result: 'done 1' });
    } finally {
      await observer.close();
    }
    // No blocking wait, subscriber or cancel-notice connection is left: only the shared one.
    await waitFor(async () => (await connections(admin)).length <= before + 1, 5000, 'the queue connections closed');
    const left = await connections(admin);
    expect(left.filter((l) => / cmd=(blpop|bzpopmin|subscribe|ssubscribe|psubscribe) /.test(l))).toEqual([]);
  } finally {
    admin.disconnect();
  }
});

test('app.close() drains a queue added at run time as a declared one, and leaves no connection', async () => {
  const prefix = uniquePrefix();
  const app = await bed.start(root(prefix));
  const registry = app.get(QueueRegistry);
  const admin = new Redis(bed.redis.url);
  try {
    const queue = await registry.addQueue<number, string>('tenant-d');
    const started = deferred();
    await registry.addProcessor<number, string>('tenant-d', async (job) => {
      started.resolve();
      await new Promise((r) => setTimeout(r, 300));
      return `done ${job.data}`;
    });
    await registry.addQueueListener('tenant-d', new TenantEvents());
    const { id } = await queue.add(1);
    await started.promise;
    bed.apps.length = 0;
    await app.close();
    // quit() returns before the server drops the socket: wait for it to.
    await waitFor(async () => (await connections(admin)).length === 0, 5000, 'every connection closed');
    const observer = new EngineQueue<number, string>('tenant-d', { connection: bed.redis.url, prefix });
    try {
      expect(await observer.getJob(id)).toMatchObject({ state: 'completed', result: 'done 1' });
    } finally {
      await observer.close();
    }
  } finally {
    admin.disconnect();
  }
});

test('a wrong call creates nothing and says what is wrong', async () => {
  @Processor('declared')
  class Declared {
    @Process()
    run(): void {}
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'declared' })], providers: [Declared] })
  class M {}
  const app = await bed.start(root(), M);
  const registry = app.get(QueueRegistry);
  const admin = new Redis(bed.redis.url);
  try {
    await registry.addQueue('tenant-e');
    const names = registry.getQueueNames();
    // The declared loop's connections are all open once it waits on the empty queue.
    await waitFor(async () => (await connections(admin)).some((l) => l.includes('cmd=blpop')), 5000, 'the declared loop waiting');
    const before = (await connections(admin)).length;

    await expect(registry.addQueue('declared')).rejects.toThrow(AlreadyRegisteredError);
    await expect(registry.addQueue('tenant-e', { bound: 10 })).rejects.toThrow(/addQueue\('tenant-e'\): a queue 'tenant-e' is already registered/);
    await expect(registry.addQueue('tenant-f', { bound: -1 })).rejects.toThrow(/^relq: addQueue\('tenant-f'\).*bound/);
    await expect(registry.addQueue('tenant-f', { sweeper: { intervalMs: 0 } })).rejects.toThrow(RelqConfigError);
    await expect(registry.addQueue('tenant-f', { nope: true } as object)).rejects.toThrow(/unknown option 'nope'/);
    await expect(registry.addQueue('tenant-f', { name: 'other' } as object)).rejects.toThrow(/leave it out of the options/);
    await expect(registry.addQueue('')).rejects.toThrow(RelqConfigError);
    await expect(registry.addQueue('tenant-f', null as unknown as object)).rejects.toThrow(/options must be an object/);
    expect(registry.getQueueNames()).toEqual(names);

    await expect(registry.addProcessor('declared', () => 1)).rejects.toThrow(/registered with QueueModule.registerQueue/);
    await expect(registry.addProcessor('missing', () => 1)).rejects.toThrow(/no queue 'missing'/);
    await expect(registry.addProcessor('tenant-e', () => 1, { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(registry.addProcessor('tenant-e', () => 1, { scope: 1 } as object)).rejects.toThrow(/scope and durable/);
    await expect(registry.addProcessor('tenant-e', new Declared())).rejects.toThrow(/has @Processor\(\)/);
    await expect(registry.addProcessor('tenant-e', {})).rejects.toThrow(/no @Process/i);
    await expect(registry.addProcessor('tenant-e', 'run' as unknown as object)).rejects.toThrow(/give a function/);
    await expect(registry.addQueueListener('tenant-e', new TenantWork())).rejects.toThrow(RelqConfigError);
    expect(registry.getProcessors().map((p) => p.queue)).toEqual(['declared']);
    // No connection opened (the previous test's may still be closing: the count only falls).
    expect((await connections(admin)).length).toBeLessThanOrEqual(before);

    await registry.addProcessor('tenant-e', () => 1);
    await expect(registry.addProcessor('tenant-e', new TenantWork())).rejects.toThrow(AlreadyRegisteredError);
    expect(registry.getProcessors().map((p) => p.processor)).toEqual(['Declared', 'handler']);

    await expect(registry.removeQueue('declared')).rejects.toThrow(/registered with QueueModule.registerQueue/);
    await expect(registry.removeQueue('missing')).rejects.toThrow(/no queue 'missing'/);
    await expect(registry.removeQueue('tenant-e', { drainTimeoutMs: -1 })).rejects.toThrow(/drainTimeoutMs/);
    await expect(registry.removeQueue('tenant-e', { drian: true } as object)).rejects.toThrow(/unknown option 'drian'/);
    expect(registry.hasQueue('tenant-e')).toBe(true);
  } finally {
    admin.disconnect();
  }
});

test('the dashboard shows queues as they are added and removed, a partitioned one with its breakdown', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [root(), QueueModule.registerQueue({ name: 'declared' }), RelqDashboardModule.forRoot({ path: '/admin/queues', publicReads: true })],
  }).compile();
  const app: INestApplication = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
  try {
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues/api/queues`;
    const shown = async () => ((await (await fetch(url)).json()) as { queues: QueueOverview[] }).queues.map((q) => q.name);
    expect(await shown()).toEqual(['declared']);
    const registry = app.get(QueueRegistry);
    await registry.addQueue('tenant-g');
    expect(await shown()).toEqual(['declared', 'tenant-g']);
    await registry.removeQueue('tenant-g');
    expect(await shown()).toEqual(['declared']);

    // a partitioned queue added at run time: processed from every partition, shown with its breakdown
    const clicks = await registry.addQueue<{ n: number }>('tenant-p', { partitions: 3 });
    expect(clicks).toBeInstanceOf(PartitionedQueue);
    const done: number[] = [];
    await registry.addProcessor<{ n: number }>('tenant-p', (job) => void done.push(job.data.n));
    await clicks.addBulk(Array.from({ length: 9 }, (_, n) => ({ data: { n } })));
    await waitFor(() => done.length === 9, 10_000, 'the partitioned queue processed');
    const overview = ((await (await fetch(url)).json()) as { queues: QueueOverview[] }).queues.find((q) => q.name === 'tenant-p');
    expect(overview?.partitions?.map((p) => p.completed).reduce((a, b) => a + b, 0)).toBe(9);
    expect(overview?.partitions).toHaveLength(3);
    await registry.removeQueue('tenant-p');
    expect(await shown()).toEqual(['declared']);
  } finally {
    await app.close();
  }
});

test('removeQueue with drain: false gives a running job back to pending at once', async () => {
  const prefix = uniquePrefix();
  const app = await bed.start(root(prefix));
  const registry = app.get(QueueRegistry);
  const queue = await registry.addQueue<number, string>('tenant-h');
  const started = deferred();
  await registry.addProcessor<number, string>('tenant-h', (job) => {
    started.resolve();
    // Ends only when its signal aborts (the give-back on removal).
    return new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason as Error)));
  });
  const { id } = await queue.add(1);
  await started.promise;
  const t0 = Date.now();
  await registry.removeQueue('tenant-h', { drain: false });
  expect(Date.now() - t0).toBeLessThan(2000); // not the processor's 5 s drain
  const observer = new EngineQueue<number, string>('tenant-h', { connection: bed.redis.url, prefix });
  try {
    expect(await observer.getJob(id)).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });
  } finally {
    await observer.close();
  }
});
