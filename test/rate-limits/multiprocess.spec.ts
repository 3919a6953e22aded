/**
 * A queue's rate limit holds across worker processes and across a restart of an AOF
 * redis-server: the limit and the current window live in Redis.
 */
import { join } from 'node:path';
import { Queue, type RateLimit } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';
import { windows } from './limiter-windows.js';

const FIXTURE = join(process.cwd(), 'test', 'rate-limits', 'fixtures', 'limited-worker.mjs');
const children = useEngineChildren();
let redis: TestRedis;
const queues: Array<Queue<number>> = [];
beforeAll(async () => {
  redis = await startRedis({ controllable: true, appendfsync: 'always' });
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  await redis?.stop();
});

test('three worker processes share one window; a Redis restart keeps the limit and the window', async () => {
  const limiter: RateLimit = { max: 3, durationMs: 1500 };
  const prefix = uniquePrefix();
  const q = new Queue<number>('mp', { connection: redis.url, prefix, limiter });
  queues.push(q);
  const env = { REDIS_URL: redis.url, PREFIX: prefix, QUEUE: 'mp', MAX: limiter.max, DURATION_MS: limiter.durationMs };
  const workers = [children.fork(FIXTURE, env), children.fork(FIXTURE, env), children.fork(FIXTURE, env)];
  await Promise.all(workers.map((w) => w.waitFor((m) => m.type === 'ready')));
  await q.addBulk(Array.from({ length: 6 }, (_, data) => ({ data })));
  const leases = () => workers.flatMap((w) => w.messages.filter((m) => m.type === 'leased')) as Array<{ id: string; at: number }>;
  await waitUntil(() => leases().length >= 3, 'the first window spent', 10_000);
  // restart while the window is spent: after it, the window still holds (AOF kept it)
  await redis.restart();
  await q.addBulk(Array.from({ length: 6 }, (_, data) => ({ data: 100 + data })));
  await waitUntil(() => leases().length === 12, 'all twelve leased', 30_000);
  const counts = windows(leases().map((l) => l.at), limiter.durationMs);
  expect(Math.max(...counts)).toBeLessThanOrEqual(limiter.max);
  expect(counts.length).toBeGreaterThanOrEqual(4);
  expect(new Set(leases().map((l) => l.id)).size).toBe(12);
}, 90_000);
