/**
 * Per-job timeouts with worker processes: each process fails its own stuck attempts at the
 * timeout (its handlers never return) and keeps working; the retries complete.
 */
import { join } from 'node:path';
import { Queue } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'timeouts', 'fixtures', 'worker.mjs');
const children = useEngineChildren();
let redis: TestRedis;
const queues: Array<Queue<number, string>> = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  await redis?.stop();
});

test('two worker processes: every first attempt times out, every retry completes, no slot stays taken', async () => {
  const prefix = uniquePrefix();
  const q = new Queue<number, string>('mp', { connection: redis.url, prefix, defaults: { timeoutMs: 300, attempts: 2, backoff: 0 } });
  queues.push(q);
  const env = { REDIS_URL: redis.url, PREFIX: prefix, QUEUE: 'mp' };
  const workers = [children.fork(FIXTURE, { ...env, NAME: 'a' }), children.fork(FIXTURE, { ...env, NAME: 'b' })];
  await Promise.all(workers.map((w) => w.waitFor((m) => m.type === 'ready')));
  // 8 jobs on 2 × 2 slots: without the timeout freeing the slots, four stuck handlers would stop both processes
  const added = await q.addBulk(Array.from({ length: 8 }, (_, data) => ({ data })));
  for (const { id } of added) expect(['a', 'b']).toContain(await q.waitForResult(id, { timeoutMs: 20_000 }));
  const timedOut = workers.flatMap((w) => w.messages.filter((m) => m.type === 'timedOut').map((m) => m.id as string));
  expect(new Set(timedOut)).toEqual(new Set(added.map((a) => a.id)));
  for (const { id } of added) expect(await q.getJob(id)).toMatchObject({ state: 'completed', failures: 1 });
  await waitUntil(async () => (await q.counts()).working === 0, 'no lease left');
}, 60_000);
