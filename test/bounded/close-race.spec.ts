import { ClosedError, Queue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

async function fullQueue(): Promise<Queue<string>> {
  const q = new Queue<string>('race', { connection: redis.url, prefix: uniquePrefix(), bound: 1 });
  await q.add('first');
  return q;
}

test('an add whose first attempt is in flight when the queue object closes settles with ClosedError', async () => {
  const q = await fullQueue();
  const add = q.add('second');
  add.catch(() => undefined);
  await new Promise((r) => setImmediate(r)); // the attempt is sent, its reply not yet read
  await q.close();
  const t = Date.now();
  await expect(add).rejects.toBeInstanceOf(ClosedError);
  expect(Date.now() - t).toBeLessThan(1000);
});

test('adds waiting for room are all released by close, however far they got', async () => {
  const q = await fullQueue();
  const adds = Array.from({ length: 5 }, (_, i) => q.add(`w${i}`));
  adds.forEach((a) => a.catch(() => undefined));
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  await q.close();
  const results = await Promise.allSettled(adds);
  for (const r of results) {
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ClosedError);
  }
});
