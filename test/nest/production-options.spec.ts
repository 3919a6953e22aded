/**
 * The production options through the Nest module: the eviction-policy warning lands in the
 * app's log, `evictionCheck` and `durability` reach each queue, and bad values stop the app at
 * startup.
 */
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { NotReplicatedError, ServerConfigError } from '../../lib/index.js';
import { getQueueToken, Queue, QueueModule, RelqConfigError } from '../../lib/nest/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let lru: TestRedis;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  lru = await startRedis({ extraArgs: ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'] });
});
afterEach(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
});
afterAll(async () => {
  await lru?.stop();
});

class Recorder implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

async function app(root: Parameters<typeof QueueModule.forRoot>[0], queue: Parameters<typeof QueueModule.registerQueue>[0], logger = new Recorder()) {
  const moduleRef = await Test.createTestingModule({
    imports: [QueueModule.forRoot({ connection: lru.url, prefix: uniquePrefix(), sweeper: false, ...root }), QueueModule.registerQueue(queue)],
  }).compile();
  moduleRef.useLogger(logger);
  await moduleRef.init();
  closers.push(() => moduleRef.close());
  return { queue: moduleRef.get<Queue<string>>(getQueueToken(queue.name)), logger };
}

test('an evicting server: one warning in the app log, naming the policy and the fix', async () => {
  const { queue, logger } = await app({}, { name: 'warned' });
  await queue.add('x');
  await queue.counts();
  const warnings = logger.warnings.filter((w) => /maxmemory-policy/.test(w));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/'allkeys-lru'.*loses jobs.*noeviction/);
});

test("evictionCheck 'error' on the queue (over the root's 'warn'): its calls fail with ServerConfigError", async () => {
  const { queue } = await app({ evictionCheck: 'warn' }, { name: 'refused', evictionCheck: 'error' });
  await expect(queue.add('x')).rejects.toBeInstanceOf(ServerConfigError);
});

test('durability reaches the queue: without a replica, an add throws NotReplicatedError', async () => {
  const { queue } = await app({ evictionCheck: 'off' }, { name: 'durable', durability: { replicas: 1, timeoutMs: 100 } });
  const err = (await queue.add('x').catch((e: unknown) => e)) as NotReplicatedError;
  expect(err).toBeInstanceOf(NotReplicatedError);
  expect(err.result).toMatchObject({ created: true });
});

test('bad values stop the app at startup, naming the option', async () => {
  await expect(app({ evictionCheck: 'sometimes' as never }, { name: 'x' })).rejects.toThrow(RelqConfigError);
  await expect(app({}, { name: 'y', durability: { replicas: 0, timeoutMs: 10 } })).rejects.toThrow(/durability.replicas/);
  await expect(app({}, { name: 'z', durability: { replicas: 1, timeoutMs: 9000 } })).rejects.toThrow(/below the connection's commandTimeout \(5000 ms\)/);
  await expect(app({ health: { requireWorkers: 'yes' as never } }, { name: 'w' })).rejects.toThrow(/health.requireWorkers/);
  await expect(app({}, { name: 'v', health: { requireWorkers: 1 as never } })).rejects.toThrow(/health.requireWorkers/);
  await expect(app({ defaults: { processor: { workerTtlMs: 10 } } }, { name: 'u' })).rejects.toThrow(/defaults.processor.workerTtlMs/);
});
