/**
 * A completed job past its retention is gone for getJob and counts, whether or not a sweep
 * has removed it yet (sweeps run every few seconds; reads must not depend on them).
 */
import { redisNow, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

test('getJob and counts stop reporting a completed job once its retention ends, before any sweep', async () => {
  const q = res.queue<string, string>();
  const obs = res.client();
  const { id: short } = await q.add('short', { keepCompletedMs: 200 });
  const { id: long } = await q.add('long', { keepCompletedMs: 60_000 });
  for (const l of await q.lease({ count: 2 })) expect(await q.ack(l, 'r')).toBe(true);

  const info = await q.getJob(short);
  expect(info).toMatchObject({ state: 'completed', result: 'r' });
  expect(await q.counts()).toMatchObject({ completed: 2 });

  await waitUntil(async () => (await redisNow(obs)) > info!.retainedUntil!, 'Redis time past the retention');
  expect(await q.getJob(short)).toBeNull();
  expect(await q.counts()).toMatchObject({ completed: 1 });
  expect(await q.getJob(long)).toMatchObject({ state: 'completed' });
  // nothing swept it: the entry is still stored, only no longer reported
  expect(await obs.zcard(q.keys.byName.done)).toBe(2);
  expect(await q.waitForResult(short, { timeoutMs: 1000 }).catch((e: Error) => e.message)).toMatch(/no longer exists/);

  expect(await q.sweep()).toMatchObject({ completedRemoved: 1 });
  expect(await obs.zcard(q.keys.byName.done)).toBe(1);
  expect(await q.counts()).toMatchObject({ completed: 1 });
});
