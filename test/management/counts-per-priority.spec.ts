/**
 * getCountsPerPriority(priorities): the pending jobs of each priority (BullMQ's
 * getCountsPerPriority), read at one instant; delayed, leased and finished jobs are not
 * pending, and the counts of all priorities add up to counts().pending.
 */
import { useRedis } from '../support/engine-harness.js';

const res = useRedis();

test('pending jobs per priority: FIFO and lifo jobs of each, the extremes, grouped jobs under 0; not delayed, leased or dead ones', async () => {
  const q = res.queue<string>();
  const add = (id: string, opts = {}) => q.add(id, { jobId: id, ...opts });
  await add('dead', { priority: -3, attempts: 1 });
  await q.nack((await q.lease())[0]!, { error: 'x' });
  await add('leased', { priority: 5 });
  expect((await q.lease())[0]!.job.id).toBe('leased');
  for (const [id, opts] of [
    ['a', {}],
    ['b', { lifo: true }],
    ['five', { priority: 5 }],
    ['five-head', { priority: 5, lifo: true }],
    ['four', { priority: 4 }],
    ['six', { priority: 6, lifo: true }],
    ['low', { priority: -3 }],
    ['top', { priority: 1000 }],
    ['bottom', { priority: -1000 }],
    ['grouped', { group: 'g' }],
    ['later', { priority: 5, delayMs: 60_000 }],
  ] as const) {
    await add(id, opts);
  }
  const asked = [5, 0, -3, 1000, -1000, 7, 4, 6, -1];
  expect(await q.getCountsPerPriority(asked)).toEqual({ 5: 2, 0: 3, [-3]: 1, 1000: 1, [-1000]: 1, 7: 0, 4: 1, 6: 1, [-1]: 0 });
  const total = Object.values(await q.getCountsPerPriority(asked)).reduce((a, b) => a + b, 0);
  expect(total).toBe((await q.counts()).pending);

  // moves follow: a new priority, a promotion, a removal
  await q.changePriority('a', 7);
  await q.promote('later');
  await q.remove('top');
  expect(await q.getCountsPerPriority([7, 5, 0, 1000, 0])).toEqual({ 7: 1, 5: 3, 0: 2, 1000: 0 });
  expect(await q.getCountsPerPriority([])).toEqual({});
});
