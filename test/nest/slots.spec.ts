/**
 * A processor's slots: the engine Worker's and each @Process() handler's own concurrency. An
 * attempt the Worker gave up on (timed out, lease lost) frees both, even while its method
 * ignores its signal; whatever a method throws, the app lives and the next job runs.
 */
import { Module } from '@nestjs/common';
import { OnWorkerEvent, Process, Processor, QueueModule, QueueRegistry, type Job } from '../../lib/nest/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useApps, waitFor } from './app-bed.js';

const bed = useApps();
const never = new Promise<never>(() => undefined);

function root() {
  return QueueModule.forRoot({
    connection: bed.redis.url,
    prefix: uniquePrefix(),
    defaults: { processor: { blockMs: 200, leaseMs: 600 } },
    shutdown: { drainTimeoutMs: 100 },
  });
}

async function startWith(processor: new () => object, queue: string) {
  @Module({ imports: [QueueModule.registerQueue({ name: queue })], providers: [processor] })
  class Feature {}
  const app = await bed.start(root(), Feature);
  return { app, queue: app.get(QueueRegistry).getQueue(queue) };
}

describe("a handler's own concurrency is given back with the Worker's slot", () => {
  test('a timed-out attempt whose method ignores its signal', async () => {
    const started: string[] = [];
    @Processor('timeouts', { concurrency: 2 })
    class Slow {
      @Process({ concurrency: 1 })
      async run(job: Job<unknown>): Promise<string> {
        started.push(job.id);
        if (job.id === 'a') await never;
        return 'done';
      }
    }
    const { queue } = await startWith(Slow, 'timeouts');
    await queue.add({}, { jobId: 'a', timeoutMs: 300, attempts: 1 });
    await waitFor(() => started.includes('a'), 3000, "'a' started");
    await queue.add({}, { jobId: 'b' });
    expect(await queue.waitForResult('b', { timeoutMs: 5000 })).toBe('done');
    expect((await queue.getJob('a'))?.state).toBe('dead');
  });

  test('a lost lease (forced remove) whose method ignores its signal', async () => {
    const started: string[] = [];
    @Processor('lost', { concurrency: 1 })
    class Hangs {
      @Process()
      async run(job: Job<unknown>): Promise<string> {
        started.push(job.id);
        if (job.id === 'a') await never;
        return 'done';
      }
    }
    const { app, queue } = await startWith(Hangs, 'lost');
    await queue.add({}, { jobId: 'a' });
    await waitFor(() => started.includes('a'), 3000, "'a' started");
    await queue.add({}, { jobId: 'b' });
    await queue.remove('a', { force: true });
    expect(await queue.waitForResult('b', { timeoutMs: 5000 })).toBe('done');
    const [status] = app.get(QueueRegistry).getProcessors();
    expect(status).toMatchObject({ inFlight: 0 });
    expect(status!.handlers[0]).toMatchObject({ active: 0, waiting: 0 });
  });
});

test('a method and a listener that throw a revoked Proxy: the job is dead with a readable error, the app goes on', async () => {
  const problems: unknown[] = [];
  const onProblem = (e: unknown) => problems.push(e);
  process.on('unhandledRejection', onProblem);
  try {
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    };
    const failures: unknown[] = [];
    @Processor('hostile', { concurrency: 1 })
    class Hostile {
      @Process()
      async run(job: Job<unknown>): Promise<string> {
        if (job.id === 'bad') throw revoked();
        return 'done';
      }

      @OnWorkerEvent('dead')
      onDead(_job: Job<unknown>, error: unknown): void {
        failures.push(error);
        throw revoked();
      }
    }
    const { queue } = await startWith(Hostile, 'hostile');
    await queue.add({}, { jobId: 'bad', attempts: 1 });
    await queue.add({}, { jobId: 'next' });
    expect(await queue.waitForResult('next', { timeoutMs: 5000 })).toBe('done');
    expect((await queue.getJob('bad'))?.lastError).toMatch(/^UnreadableValueError: a handler threw an unreadable object/);
    await waitFor(() => failures.length === 1, 3000, "the 'dead' listener called");
    expect(problems).toEqual([]);
  } finally {
    process.off('unhandledRejection', onProblem);
  }
});
