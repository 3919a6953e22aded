/**
 * @OnWorkerEvent: the events of a processor's own worker, 'active', 'progress' and 'stalled'
 * among them, and the clear errors for a queue-wide @OnQueueEvent on a processor and for an
 * @OnWorkerEvent in a @QueueEventsListener class.
 */
import { Module } from '@nestjs/common';
import {
  OnQueueEvent,
  OnWorkerEvent,
  Process,
  Processor,
  Queue,
  QueueEventsListener,
  QueueModule,
  QueueRegistry,
  type Job,
  type LeasedJob,
} from '../../lib/nest/index.js';
import { uniquePrefix } from '../support/redis.js';
import { deferred, useApps, waitFor } from './app-bed.js';

const bed = useApps();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});

function root(prefix: string) {
  return QueueModule.forRoot({
    connection: bed.redis.url,
    prefix,
    defaults: { processor: { blockMs: 200, leaseMs: 1000 } },
    shutdown: { drainTimeoutMs: 200 },
  });
}

test("'active', 'progress' and 'completed' reach @OnWorkerEvent methods, in that order", async () => {
  const seen: string[] = [];

  @Processor('render')
  class RenderProcessor {
    @Process()
    async render(job: Job<number>): Promise<number> {
      await job.updateProgress(50);
      await job.updateProgress({ step: 'done' });
      return job.data * 2;
    }

    @OnWorkerEvent('active')
    onActive(job: LeasedJob<number>): void {
      seen.push(`active ${job.data} attempt ${job.attempt}`);
    }

    @OnWorkerEvent('progress')
    onProgress(job: LeasedJob<number>, progress: unknown): void {
      seen.push(`progress ${job.data} ${JSON.stringify(progress)}`);
    }

    @OnWorkerEvent('completed')
    onCompleted(job: LeasedJob<number>, result: number): void {
      seen.push(`completed ${job.data} ${result}`);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'render' })], providers: [RenderProcessor] })
  class RenderModule {}

  const app = await bed.start(root(uniquePrefix()), RenderModule);
  await app.get(QueueRegistry).getQueue<number>('render').add(21);
  await waitFor(() => seen.length === 4, 5000, 'four events');
  expect(seen).toEqual(['active 21 attempt 1', 'progress 21 50', 'progress 21 {"step":"done"}', 'completed 21 42']);
});

test("'drained' reaches @OnWorkerEvent methods without arguments once the loop found the queue emptied", async () => {
  const seen: string[] = [];

  @Processor('batch')
  class BatchProcessor {
    @Process()
    handle(job: Job<number>): void {
      seen.push(`job ${job.data}`);
    }

    @OnWorkerEvent('drained')
    onDrained(...args: unknown[]): void {
      seen.push(`drained (${args.length} arguments)`);
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'batch' })], providers: [BatchProcessor] })
  class BatchModule {}

  const app = await bed.start(root(uniquePrefix()), BatchModule);
  await waitFor(() => seen.length === 1, 5000, 'drained on the empty queue');
  await app.get(QueueRegistry).getQueue<number>('batch').addBulk([{ data: 1 }, { data: 2 }]);
  await waitFor(() => seen.length === 4, 5000, 'the jobs, then drained again');
  expect(seen).toEqual(['drained (0 arguments)', 'job 1', 'job 2', 'drained (0 arguments)']);
});

test("'stalled' reports the id of each expired lease this process's sweeper returned", async () => {
  const prefix = uniquePrefix();
  const stalled: string[] = [];
  const done: string[] = [];

  @Processor('crashy')
  class CrashyProcessor {
    @Process()
    handle(job: Job<string>): void {
      done.push(job.id);
    }

    @OnWorkerEvent('stalled')
    onStalled(jobId: string): void {
      stalled.push(jobId);
    }
  }

  @Module({
    imports: [QueueModule.registerQueue({ name: 'crashy', sweeper: { intervalMs: 100 } })],
    providers: [CrashyProcessor],
  })
  class CrashyModule {}

  // Another consumer leases the job and dies holding it (its lease is never touched again).
  const other = new Queue<string>('crashy', { connection: bed.redis.url, prefix });
  closers.push(() => other.close());
  const { id } = await other.add('payload');
  const [lease] = await other.lease({ count: 1, leaseMs: 200 });
  expect(lease?.job.id).toBe(id);

  await bed.start(root(prefix), CrashyModule);
  await waitFor(() => done.includes(id), 10_000, 'the job run again after its lease expired');
  expect(stalled).toEqual([id]);
});

test('@OnQueueEvent on a processor is refused with the way to say it', async () => {
  @Processor('mixed')
  class MixedProcessor {
    @Process()
    handle(): void {}

    @OnQueueEvent('completed')
    onCompleted(): void {}
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'mixed' })], providers: [MixedProcessor] })
  class MixedModule {}

  await expect(bed.start(root(uniquePrefix()), MixedModule)).rejects.toThrow(
    /MixedProcessor\.onCompleted has @OnQueueEvent\(\).*@QueueEventsListener\(\).*use @OnWorkerEvent\(\)/,
  );
});

test('@OnWorkerEvent in a @QueueEventsListener class is refused with the way to say it', async () => {
  @QueueEventsListener('mirror')
  class MirrorEvents {
    @OnQueueEvent('completed')
    onCompleted(): void {}

    @OnWorkerEvent('completed')
    onDone(): void {}
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'mirror' })], providers: [MirrorEvents] })
  class MirrorModule {}

  await expect(bed.start(root(uniquePrefix()), MirrorModule)).rejects.toThrow(
    /@QueueEventsListener\('mirror'\) MirrorEvents: MirrorEvents\.onDone has @OnWorkerEvent\(\).*@Processor\(\).*use @OnQueueEvent\(\)/,
  );
});

test('an unknown @OnWorkerEvent type is refused, naming the known ones', async () => {
  @Processor('odd')
  class OddProcessor {
    @Process()
    handle(): void {}

    @OnWorkerEvent('finished' as 'completed')
    onFinished(): void {}
  }

  @Module({ imports: [QueueModule.registerQueue({ name: 'odd' })], providers: [OddProcessor] })
  class OddModule {}

  await expect(bed.start(root(uniquePrefix()), OddModule)).rejects.toThrow(
    /OddProcessor\.onFinished @OnWorkerEvent\('finished'\): unknown event \(known: active, progress, stalled, completed/,
  );
});

/**
 * A processor of queue `name` whose 'completed' method, for the job 'first', waits for `gate()`
 * and then adds a follow-up job: what that add met lands in `outcome`. Resolves once the call
 * runs; the app closes with the bed unless the test closes it.
 */
async function startFollowUp(name: string, gate: () => Promise<unknown>) {
  const entered = deferred();
  const outcome: string[] = [];

  @Processor(name)
  class FollowProcessor {
    constructor(private readonly registry: QueueRegistry) {}

    @Process()
    handle(): void {}

    @OnWorkerEvent('completed')
    async onCompleted(job: LeasedJob<string>): Promise<void> {
      if (job.data !== 'first') return;
      entered.resolve();
      await gate();
      await this.registry.getQueue(name).add('second').then(
        () => outcome.push('added'),
        (err: Error) => outcome.push(err.name),
      );
    }
  }

  @Module({ imports: [QueueModule.registerQueue({ name })], providers: [FollowProcessor] })
  class FollowModule {}

  const app = await bed.start(root(uniquePrefix()), FollowModule);
  const warnings: string[] = [];
  app.useLogger({ log() {}, error() {}, warn: (m: unknown) => void warnings.push(String(m)) });
  await app.get(QueueRegistry).getQueue(name).add('first');
  await entered.promise;
  /** Closes the app here instead of after the test. */
  const close = () => {
    bed.apps.splice(bed.apps.indexOf(app), 1);
    return app.close();
  };
  return { close, outcome, warnings };
}

test('a @OnWorkerEvent() call that ends within drainTimeoutMs runs on an open queue before the shutdown closes it', async () => {
  const { close, outcome } = await startFollowUp('follow', () => new Promise((r) => setTimeout(r, 50))); // well within drainTimeoutMs (200)
  await close();
  expect(outcome).toEqual(['added']);
});

test('a @OnWorkerEvent() call that outlives drainTimeoutMs holds the shutdown that long, then is warned about', async () => {
  const gate = deferred();
  const { close, outcome, warnings } = await startFollowUp('follow-slow', () => gate.promise);
  let closed = false;
  const closing = close().then(() => (closed = true));
  // drainTimeoutMs is 200: the close holds while the call runs, then warns and goes on
  await waitFor(() => warnings.some((w) => /^FollowProcessor: 1 @OnWorkerEvent\(\) call\(s\) still running after 200 ms/.test(w)), 10_000, 'the warning');
  await closing;
  expect(closed).toBe(true);
  gate.resolve();
  await waitFor(() => outcome.length === 1, 5000, 'the late call to end');
  expect(outcome).toEqual(['ClosedError']); // it outlived the wait: the queue had closed under it
});
