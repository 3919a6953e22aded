import { Queue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

test('add, lease, ack', async () => {
  const q = new Queue<{ n: number }, string>('smoke', { connection: redis.url, prefix: uniquePrefix() });
  const { id, created } = await q.add({ n: 1 });
  expect(created).toBe(true);
  const [lease] = await q.lease({ leaseMs: 1000 });
  expect(lease!.job.id).toBe(id);
  expect(lease!.job.data).toEqual({ n: 1 });
  expect(await q.ack(lease!, 'ok')).toBe(true);
  expect(await q.ack(lease!, 'ok')).toBe(false);
  const info = await q.getJob(id);
  expect(info?.state).toBe('completed');
  expect(info?.result).toBe('ok');
  await q.close();
});
