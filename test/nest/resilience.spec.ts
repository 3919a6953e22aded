import { Controller, Get, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  Process,
  Processor,
  QueueHealthIndicator,
  QueueHealthService,
  QueueModule,
  QueueRegistry,
  type HealthOptions,
  type Job,
} from '../../lib/nest/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { Redis } from 'ioredis';
import { waitFor } from './app-bed.js';

// Both tests kill and restart a private redis-server (data is not kept across restarts).
let redis: TestRedis;
let app: INestApplication | undefined;

beforeAll(async () => {
  redis = await startRedis({ controllable: true });
});
afterEach(async () => {
  await app?.close();
  app = undefined;
});
afterAll(async () => {
  await redis.stop();
});

@Processor('echo')
class EchoProcessor {
  @Process()
  run(job: Job<{ n: number }>): number {
    return job.data.n;
  }
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queues: QueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queues.isHealthy('queues')]);
  }
}

async function boot(extra: HealthOptions = {}): Promise<INestApplication> {
  @Module({
    imports: [
      QueueModule.forRoot({
        connection: redis.url,
        prefix: uniquePrefix(),
        defaults: { processor: { blockMs: 300, leaseMs: 1000 } },
        sweeper: { intervalMs: 200 },
        health: { timeoutMs: 500, ...extra },
      }),
      QueueModule.registerQueue({ name: 'echo' }),
      TerminusModule,
    ],
    controllers: [HealthController],
    providers: [EchoProcessor],
  })
  class AppModule {}

  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const created = moduleRef.createNestApplication({ logger: process.env.RELQ_TEST_LOGS ? ['error', 'warn', 'log'] : false });
  await created.init();
  app = created;
  return created;
}

test('lease loops resume consuming after the redis-server restarts', async () => {
  const a = await boot();
  const queue = a.get(QueueRegistry).getQueue<{ n: number }, number>('echo');
  const first = await queue.add({ n: 1 });
  expect(await queue.waitForResult(first.id, { timeoutMs: 3000 })).toBe(1);

  await redis.kill();
  await waitFor(() => a.get(QueueRegistry).getProcessors()[0]!.state === 'erroring', 5000, 'loop notices the outage');
  await redis.restart(); // same port, empty data set

  // The producer and the loop reconnect by themselves.
  const second = await waitFor(() => queue.add({ n: 2 }), 10_000, 'producer reconnects');
  expect(await queue.waitForResult(second.id, { timeoutMs: 10_000 })).toBe(2);
  await waitFor(() => a.get(QueueRegistry).getProcessors()[0]!.alive, 5000, 'loop alive again');
}, 30_000);

test('health: up, then down with details while Redis is away, then up again', async () => {
  const a = await boot();
  const server = a.getHttpServer();

  const up = await request(server).get('/health').expect(200);
  expect(up.body.status).toBe('ok');
  const details = up.body.info.queues;
  expect(details.status).toBe('up');
  expect(details.redis[0]).toMatchObject({ reachable: true, latencyMs: expect.any(Number) });
  expect(details.queues.echo.counts).toMatchObject({ pending: 0, dead: 0 });
  expect(details.queues.echo.processors[0]).toMatchObject({ processor: 'EchoProcessor', alive: true });

  await redis.kill();
  const down = await waitFor(
    async () => {
      const res = await request(server).get('/health');
      return res.status === 503 ? res : undefined;
    },
    5000,
    'health down',
  );
  expect(down.body.status).toBe('error');
  const err = down.body.error.queues;
  expect(err.status).toBe('down');
  expect(err.redis[0]).toMatchObject({ reachable: false, error: expect.any(String) });
  expect(err.problems.join('\n')).toMatch(/unreachable/);
  // The plain service reports the same, without terminus.
  const plain = await a.get(QueueHealthService).check();
  expect(plain.healthy).toBe(false);
  expect(plain.redis[0]!.reachable).toBe(false);

  await redis.restart();
  await waitFor(async () => (await request(server).get('/health')).status === 200, 10_000, 'health up again');
  const again = await request(server).get('/health').expect(200);
  expect(again.body.info.queues.redis[0].reachable).toBe(true);
}, 30_000);

test('health: backlog over maxPending is down with the count in the details', async () => {
  const a = await boot({ maxPending: 2 });
  await a.get(QueueRegistry).stopWorkers();
  const queue = a.get(QueueRegistry).getQueue('echo');
  await queue.addBulk([{ data: { n: 1 } }, { data: { n: 2 } }, { data: { n: 3 } }]);
  const report = await a.get(QueueHealthService).check();
  expect(report.healthy).toBe(false);
  expect(report.queues.echo).toMatchObject({ healthy: false, counts: { pending: 3 }, thresholds: { maxPending: 2 } });
  expect(report.problems).toEqual([`queue 'echo': backlog 3 pending > maxPending 2`]);
  await a.get(QueueRegistry).startWorkers();
  await waitFor(async () => (await a.get(QueueHealthService).check()).healthy, 5000, 'backlog drained');
});

test('health with requireWorkers: jobs pending and no live worker in any process is down; the processor is listed under its class name', async () => {
  const a = await boot({ requireWorkers: true });
  const queue = a.get(QueueRegistry).getQueue('echo');
  await waitFor(async () => (await queue.getWorkers()).length === 1, 5000, 'the processor listed');
  expect((await queue.getWorkers())[0]).toMatchObject({ appName: 'EchoProcessor', pid: process.pid });
  expect(await a.get(QueueHealthService).check()).toMatchObject({ healthy: true, queues: { echo: { liveWorkers: null } } }); // nothing pending: not read
  await a.get(QueueRegistry).stopWorkers(); // its worker leaves the list at once
  await queue.add({ n: 1 });
  const report = await a.get(QueueHealthService).check();
  expect(report.queues.echo).toMatchObject({ healthy: false, liveWorkers: 0, thresholds: { requireWorkers: true } });
  expect(report.problems).toEqual([`queue 'echo': 1 job(s) pending and no live worker (requireWorkers)`]);
  await a.get(QueueRegistry).startWorkers();
  await waitFor(async () => (await a.get(QueueHealthService).check()).healthy, 5000, 'served again');
});

test('connections: one shared command connection plus, per running processor, one blocking connection and one for its queue\'s cancel notices; all closed by app.close()', async () => {
  const observer = new Redis(redis.url);
  try {
    const clients = async () => String(await observer.client('LIST')).trim().split('\n').length - 1; // minus the observer
    const a = await boot();
    const queue = a.get(QueueRegistry).getQueue<{ n: number }, number>('echo');
    await queue.add({ n: 1 });
    await waitFor(async () => (await queue.counts()).completed === 1, 3000, 'processed');
    // Health checks, sweeps, heartbeats and producers all use the shared connection (docs/nest.md, Connections).
    await request(a.getHttpServer()).get('/health').expect(200);
    expect(await clients()).toBe(3);
    await a.close();
    app = undefined;
    await waitFor(async () => (await clients()) === 0, 3000, 'all relq connections closed');
  } finally {
    observer.disconnect();
  }
});
