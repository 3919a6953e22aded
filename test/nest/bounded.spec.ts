import { Controller, Injectable, Module, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import type { TestingModule } from '@nestjs/testing';
import {
  ClosedError,
  InjectQueue,
  Process,
  Processor,
  Queue,
  QueueClosedError,
  QueueFullError,
  QueueHealthIndicator,
  QueueHealthService,
  QueueInUseError,
  QueueModule,
  QueueRegistry,
  RelqConfigError,
  type Job,
  type RegisterQueueOptions,
} from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { sleep, startApp, waitFor } from './app-bed.js';

let redis: TestRedis;
const apps: Array<{ close(): Promise<void> }> = [];
const observers: EngineQueue[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
  while (observers.length) await observers.pop()!.close();
});
afterAll(async () => {
  await redis.stop();
});

async function start(...imports: NonNullable<Parameters<typeof startApp>[0]['imports']>): Promise<TestingModule> {
  const app = await startApp({ imports });
  apps.push(app);
  return app;
}

/** An engine Queue outside the app, for looking at the queue's state. */
function observe(name: string, prefix: string): EngineQueue {
  const q = new EngineQueue(name, { connection: redis.url, prefix });
  observers.push(q);
  return q;
}

/** Settles `p` into what it resolved or rejected with, without throwing. */
function outcome<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

@Injectable()
class OrdersProducer {
  constructor(@InjectQueue('orders') readonly queue: Queue<{ n: number }>) {}
}

function ordersModule(options: Omit<RegisterQueueOptions, 'name'>) {
  @Module({ imports: [QueueModule.registerQueue({ name: 'orders', ...options })], providers: [OrdersProducer] })
  class OrdersModule {}
  return OrdersModule;
}

test('registerQueue({ bound }): the injected queue never holds more; tryAdd fails at once, add waits until waitMs', async () => {
  const prefix = uniquePrefix();
  const app = await start(QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }), ordersModule({ bound: 3 }));
  const { queue } = app.get(OrdersProducer);
  for (let n = 0; n < 3; n++) await queue.add({ n });
  await expect(queue.tryAdd({ n: 3 })).rejects.toBeInstanceOf(QueueFullError);
  const t0 = Date.now();
  const late = await outcome(queue.add({ n: 4 }, { waitMs: 150 }));
  expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  expect(late.ok).toBe(false);
  expect((late as { error: QueueFullError }).error).toBeInstanceOf(QueueFullError);
  expect((late as { error: QueueFullError }).error.message).toMatch(/queue 'orders' is still full \(bound 3\)/);
  const counts = await queue.counts();
  expect(counts.pending).toBe(3);
  expect(await queue.queueState()).toMatchObject({ bound: 3, closed: false });

  // A slot freed by a consumer lets a waiting add in.
  const waiting = queue.add({ n: 5 });
  await waitFor(async () => (await queue.queueState()).waitingProducers === 1, 10_000, 'the add to wait for room');
  const [lease] = await observe('orders', prefix).lease({ leaseMs: 5000 });
  await observers[0]!.ack(lease!);
  await expect(waiting).resolves.toMatchObject({ created: true });
  expect((await queue.counts()).pending).toBe(3);
});

test('a producer blocked in add() on a full queue is released by app.close() with a clear error; close is prompt', async () => {
  const prefix = uniquePrefix();

  @Processor('orders', { drainTimeoutMs: 5000 })
  class IdleOrders {
    // Never runs: the queue is filled while this app's loop is stopped.
    @Process()
    run(): void {}
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'orders', bound: 2 })], providers: [OrdersProducer, IdleOrders] })
  class M {}

  const app = await start(
    QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false }, defaults: { processor: { blockMs: 200 } } }),
    M,
  );
  const { queue } = app.get(OrdersProducer);
  await queue.add({ n: 1 });
  await queue.add({ n: 2 });
  const blocked = outcome(queue.add({ n: 3 })); // no waitMs: would wait forever
  const blockedBulk = outcome(queue.addBulk([{ data: { n: 4 } }, { data: { n: 5 } }]));
  await waitFor(async () => (await queue.queueState()).waitingProducers === 1, 10_000, 'the add to register as a waiter');

  const t0 = Date.now();
  await app.close();
  apps.length = 0;
  const closeMs = Date.now() - t0;
  expect(closeMs).toBeLessThan(4000); // the waiters released at once, not after the 5 s drain

  for (const r of [await blocked, await blockedBulk]) {
    expect(r.ok).toBe(false);
    const error = (r as { error: ClosedError }).error;
    expect(error).toBeInstanceOf(ClosedError);
    expect(error.code).toBe('RELQ_CLOSED');
    expect(error.message).toMatch(/'orders'.*add\(\) waiting for room was released/);
  }
  // Nothing was added behind the caller's back, and the waiter registration is gone.
  const observer = observe('orders', prefix);
  expect((await observer.counts()).pending).toBe(2);
  expect((await observer.queueState()).waitingProducers).toBe(0);
});

test('an HTTP request blocked in add() does not hold up app.close() (released before the server waits for it)', async () => {
  const prefix = uniquePrefix();

  @Controller('orders')
  class OrdersController {
    constructor(@InjectQueue('orders') private readonly queue: Queue<{ n: number }>) {}
    @Post()
    async create(): Promise<{ id: string }> {
      return { id: (await this.queue.add({ n: 1 })).id };
    }
  }
  @Module({
    imports: [
      QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }),
      QueueModule.registerQueue({ name: 'orders', bound: 1 }),
    ],
    controllers: [OrdersController],
  })
  class HttpApp {}

  const app: INestApplication = await NestFactory.create(HttpApp, { logger: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const url = `${await app.getUrl()}/orders`;
  expect((await fetch(url, { method: 'POST' })).status).toBe(201); // fills the queue
  const pending = outcome(fetch(url, { method: 'POST' })); // blocks in add()
  const observer = observe('orders', prefix);
  await waitFor(async () => (await observer.queueState()).waitingProducers === 1, 10_000, 'the request to wait for room');

  const t0 = Date.now();
  await app.close();
  apps.length = 0;
  expect(Date.now() - t0).toBeLessThan(4000); // released, not waited for
  const response = await pending;
  // The request ends (with a 500 from the ClosedError, or a dropped connection), it does not hang.
  if (response.ok) expect(response.value.status).toBe(500);
  expect((await observer.counts()).pending).toBe(1);
});

test('closeOnShutdown: the queue is closed when the producing app stops (consumers elsewhere drain it and stop), reopened when it starts', async () => {
  const prefix = uniquePrefix();
  const handled: number[] = [];

  @Processor('orders')
  class OrdersConsumer {
    @Process()
    async run(job: Job<{ n: number }>): Promise<void> {
      await sleep(20);
      handled.push(job.data.n);
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'orders' })], providers: [OrdersConsumer] })
  class ConsumerModule {}

  const root = () => QueueModule.forRoot({ connection: redis.url, prefix, defaults: { processor: { blockMs: 200 } }, sweeper: false });
  const consumer = await start(root(), ConsumerModule);

  const producerModule = ordersModule({ closeOnShutdown: true, checkClosed: true });
  const producer = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }), producerModule] });
  const { queue } = producer.get(OrdersProducer);
  await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ data: { n } })));
  await producer.close();

  const observer = observe('orders', prefix);
  expect(await observer.isQueueClosed()).toBe(true);
  // A producer that checks the state is refused; the consumer finishes what was there, then stops.
  const checking = new EngineQueue('orders', { connection: redis.url, prefix, checkClosed: true });
  observers.push(checking);
  expect(await checking.tryAdd({ n: 9 }).catch((e: unknown) => e)).toBeInstanceOf(QueueClosedError);
  const registry = consumer.get(QueueRegistry);
  await waitFor(() => registry.getProcessors()[0]!.state === 'stopped', 3000, 'the consumer to stop by itself');
  expect(handled.sort()).toEqual([0, 1, 2, 3, 4]);

  // The producing app starts again: the queue is open again.
  const again = await start(QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }), producerModule);
  expect(await observer.isQueueClosed()).toBe(false);
  await expect(again.get(OrdersProducer).queue.add({ n: 6 })).resolves.toMatchObject({ created: true });
  // The stopped consumer can be started again.
  expect(await registry.startWorkers('orders')).toBe(1);
  await waitFor(() => handled.includes(6), 3000, 'the restarted consumer to take the new job');
});

test('closeOnShutdown with Redis away: the app starts and stops anyway, within the 2 s limits of reopen and close', async () => {
  const t0 = Date.now();
  const app = await startApp({
    imports: [
      // Nothing listens on port 1: every call fails.
      QueueModule.forRoot({
        connection: { host: '127.0.0.1', port: 1 },
        workers: { enabled: false },
        sweeper: false,
      }),
      ordersModule({ closeOnShutdown: true }),
    ],
  });
  const startMs = Date.now() - t0;
  const t1 = Date.now();
  await app.close();
  const closeMs = Date.now() - t1;
  expect(startMs).toBeLessThan(3000);
  expect(closeMs).toBeLessThan(4000);
});

test('registerQueueAsync takes the same options from a factory', async () => {
  const prefix = uniquePrefix();
  @Module({
    imports: [QueueModule.registerQueueAsync({ name: 'orders', useFactory: () => ({ bound: 2, stats: true }) })],
    providers: [OrdersProducer],
  })
  class M {}
  const app = await start(QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }), M);
  const { queue } = app.get(OrdersProducer);
  await queue.addBulk([{ data: { n: 1 } }, { data: { n: 2 } }]);
  await expect(queue.tryAdd({ n: 3 })).rejects.toBeInstanceOf(QueueFullError);
  expect(await queue.queueState()).toMatchObject({ bound: 2, stats: true });
  expect(await queue.stats()).toMatchObject({ produced: { messages: 2 } });

  const bad = await startApp({
    imports: [
      QueueModule.forRoot({ connection: redis.url, prefix }),
      QueueModule.registerQueueAsync({ name: 'broken', useFactory: () => ({ bound: -5 }) }),
    ],
  }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(RelqConfigError);
  expect((bad as Error).message).toMatch(/registerQueue\('broken'\): bound: must be between 0/);
});

test('per-queue stats, groupConcurrency and exclusive reach the engine', async () => {
  const prefix = uniquePrefix();
  const root = () => QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false }, sweeper: false });
  const opts = { stats: true, groupConcurrency: 2, exclusive: { producer: true } } as const;
  const first = await start(root(), ordersModule(opts));
  const second = await start(root(), ordersModule(opts));
  await first.get(OrdersProducer).queue.add({ n: 1 }, { group: 'tenant-1' });
  expect(await first.get(OrdersProducer).queue.queueState()).toMatchObject({ stats: true, groupConcurrency: 2, bound: 0 });
  const conflict = await second
    .get(OrdersProducer)
    .queue.add({ n: 2 })
    .catch((e: unknown) => e);
  expect(conflict).toBeInstanceOf(QueueInUseError);
  expect((conflict as QueueInUseError).holder).toMatchObject({ pid: process.pid, instance: first.get(OrdersProducer).queue.identity.instance });
});

test('globalConcurrency and groupOverrides from registerQueue hold across two apps whose processors have 5 slots each', async () => {
  const prefix = uniquePrefix();
  let running = 0;
  let most = 0;
  let done = 0;
  function workerApp() {
    @Processor('orders', { concurrency: 5, blockMs: 500 })
    class OrdersConsumer {
      @Process()
      async run(): Promise<void> {
        most = Math.max(most, ++running);
        await sleep(50);
        running -= 1;
        done += 1;
      }
    }
    @Module({
      imports: [QueueModule.registerQueue({ name: 'orders', globalConcurrency: 3, groupOverrides: { vip: { concurrency: 2 } } })],
      providers: [OrdersConsumer],
    })
    class ConsumerModule {}
    return startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix, sweeper: false }), ConsumerModule] });
  }
  const apps = [await workerApp(), await workerApp()];
  const producer = new EngineQueue<{ n: number }>('orders', { connection: redis.url, prefix });
  try {
    await producer.addBulk(Array.from({ length: 24 }, (_, n) => ({ data: { n } })));
    await waitFor(async () => done === 24, 20_000, '24 jobs done');
    expect(most).toBe(3);
    expect(await producer.queueState()).toMatchObject({ globalConcurrency: 3, groupOverrides: { vip: { concurrency: 2 } } });
  } finally {
    await producer.close();
    for (const app of apps) await app.close();
  }
});

test('exclusive consumer: the second app stands by (healthy) and takes over when the first stops', async () => {
  const prefix = uniquePrefix();
  const handledBy: string[] = [];
  function consumerApp(label: string) {
    @Processor('orders', { blockMs: 200 })
    class OrdersConsumer {
      @Process()
      run(): void {
        handledBy.push(label);
      }
    }
    @Module({
      imports: [QueueModule.registerQueue({ name: 'orders', exclusive: { consumer: true, ttlMs: 1000 } })],
      providers: [OrdersConsumer],
    })
    class ConsumerModule {}
    return startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix, sweeper: false }), ConsumerModule] });
  }
  const first = await consumerApp('first');
  const producer = observe('orders', prefix);
  await producer.add({ n: 1 });
  await waitFor(() => handledBy.length === 1, 3000, 'the first app to consume');
  const second = await consumerApp('second');
  apps.push(second);
  const registry = second.get(QueueRegistry);
  await waitFor(() => registry.getProcessors()[0]!.state === 'standby', 3000, 'the second app to stand by');
  expect(registry.getProcessors()[0]).toMatchObject({ alive: true, lastError: expect.stringMatching(/already has an exclusive consumer/) });
  const health = await second.get(QueueHealthService).check();
  expect(health.healthy).toBe(true);

  await producer.add({ n: 2 });
  await waitFor(() => handledBy.length === 2, 3000, 'the first app to consume again');
  await first.close(); // releases the role
  await producer.add({ n: 3 });
  await waitFor(() => handledBy.length === 3, 8000, 'the second app to take over');
  expect(handledBy).toEqual(['first', 'first', 'second']);
  expect(registry.getProcessors()[0]!.state).not.toBe('standby');
});

test('health details: bound usage, waiting producers, closed state and stats per queue', async () => {
  const prefix = uniquePrefix();

  @Module({
    imports: [
      TerminusModule,
      QueueModule.registerQueue({ name: 'orders', bound: 4, stats: true }, { name: 'plain' }),
    ],
    providers: [OrdersProducer],
  })
  class M {}
  const app = await start(QueueModule.forRoot({ connection: redis.url, prefix, workers: { enabled: false } }), M);
  const { queue } = app.get(OrdersProducer);
  // 3 jobs of 8 bytes of JSON each: {"n":10}
  for (const n of [10, 11, 12]) await queue.add({ n });
  const [lease] = await observe('orders', prefix).lease({ leaseMs: 5000 });
  expect(lease).toBeDefined();

  const result = await app.get(QueueHealthIndicator).isHealthy('queues');
  expect(result.queues.status).toBe('up');
  expect(result.queues.queues.orders).toMatchObject({
    closed: false,
    bound: { limit: 4, unfinished: 3, free: 1, usage: 0.75, waitingProducers: 0 },
    stats: { enabled: true, produced: { messages: 3, bytes: 24 }, consumed: { messages: 1, bytes: 8 } },
  });
  expect(result.queues.queues.plain).toMatchObject({ closed: false, bound: null, stats: null });

  // Full, with a producer waiting, then closed: reported, and still healthy (backpressure at work).
  await queue.add({ n: 13 });
  const blocked = outcome(queue.add({ n: 14 }));
  const service = app.get(QueueHealthService);
  await waitFor(async () => (await service.check()).queues.orders!.bound?.waitingProducers === 1, 2000, 'a waiting producer in the report');
  await queue.closeQueue();
  const report = await service.check();
  expect(report.healthy).toBe(true);
  expect(report.queues.orders).toMatchObject({ closed: true, bound: { unfinished: 4, free: 0, usage: 1 } });
  const released = await blocked;
  expect((released as { error: unknown }).error).toBeInstanceOf(QueueClosedError);
});

describe('bootstrap errors for queue options', () => {
  async function bootError(options: Record<string, unknown>): Promise<Error> {
    try {
      const app = await startApp({
        imports: [QueueModule.forRoot({ connection: redis.url }), QueueModule.registerQueue({ name: 'q', ...options } as RegisterQueueOptions)],
      });
      await app.close();
    } catch (err) {
      return err as Error;
    }
    throw new Error(`the app started with ${JSON.stringify(options)}, but an error was expected`);
  }

  test.each([
    [{ bound: -1 }, /registerQueue\('q'\): bound: must be between 0 and \d+, got -1/],
    [{ bound: 2.5 }, /registerQueue\('q'\): bound: must be a whole number, got 2\.5/],
    [{ bound: '10' }, /registerQueue\('q'\): bound: must be a finite number, got/],
    // The engine's Queue checks these options and words the rule; the Nest layer names the call.
    [{ stats: 'yes' }, /registerQueue\('q'\): stats: must be /],
    [{ groupConcurrency: -2 }, /registerQueue\('q'\): groupConcurrency: must be between 0/],
    [{ globalConcurrency: 1.5 }, /registerQueue\('q'\): globalConcurrency: must be a whole number/],
    [{ groupOverrides: { vip: { concurrency: 'ten' } } }, /registerQueue\('q'\): groupOverrides\['vip'\]\.concurrency: must be/],
    [{ exclusive: { producer: 1 } }, /registerQueue\('q'\): exclusive\.producer: must be /],
    [{ exclusive: { owner: true } }, /registerQueue\('q'\): exclusive: unknown option 'owner'/],
    [{ exclusive: { consumer: true, ttlMs: 5 } }, /registerQueue\('q'\): exclusive\.ttlMs: must be between 30/],
    [{ bound: 5, checkClosed: false }, /registerQueue\('q'\): checkClosed: false contradicts bound: 5, whose adds always check the queue's state; leave checkClosed out/],
    [{ closeOnShutdown: 'yes' }, /registerQueue\('q'\): closeOnShutdown: must be true or false/],
    [{ bounds: 10 }, /registerQueue\('q'\): unknown option 'bounds'/],
  ])('%j', async (options, message) => {
    const err = await bootError(options);
    expect(err).toBeInstanceOf(RelqConfigError);
    expect(err.message).toMatch(message);
  });
});
