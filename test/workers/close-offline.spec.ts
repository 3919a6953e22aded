/**
 * A closing worker removes its entry from the live workers (getWorkers) with one call, which
 * it does not wait long for: with Redis away the reply could take the whole command timeout,
 * and the entry expires by itself anyway.
 */
import { Queue, Worker } from '../../lib/index.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

let redis: TestRedis | undefined;
let q: Queue<number> | undefined;
afterAll(async () => {
  await q?.close();
  await redis?.stop();
});

test('with Redis away, a worker that registered closes as promptly as one that did not', async () => {
  redis = await startRedis({ controllable: true });
  q = new Queue<number>('offline-close', { connection: redis.url });
  const w = new Worker(q, async () => undefined, { blockMs: 200 });
  await q.add(1);
  await waitUntil(async () => (await q!.getWorkers()).length === 1 && (await q!.counts()).completed === 1, 'the worker listed, its job done');
  await redis.stop();
  const t0 = Date.now();
  await w.close({ drainTimeoutMs: 0 });
  // its loop's own stop takes a few hundred ms here; the removal of its entry adds at most 250
  expect(Date.now() - t0).toBeLessThan(1200);
});
