/**
 * A metrics history is bounded: a minute's counts are gone `keepMinutes` after the minute
 * ended, by the expiry its first write set, on the real clock (up to two minutes of waiting).
 */
import { redisNow, scanKeys, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

test('with keepMinutes 1, a minute is read back until a minute after it ended, then it is gone', async () => {
  const q = res.queue('mh-trim', { metrics: { keepMinutes: 1 } });
  const obs = res.client();
  await q.add(1);
  await q.ack((await q.lease())[0]!);
  const [written] = (await q.getMetrics()).points.filter((p) => p.completed > 0);
  expect(written).toBeDefined();
  const minute = written!.at;
  const read = async () => (await q.getMetrics({ from: minute, to: minute })).points[0]!.completed;
  // kept through the next minute
  await waitUntil(async () => (await redisNow(obs)) >= minute + 60_000, 'the next minute', 70_000, 500);
  expect(await read()).toBe(1);
  // gone once the minute after it ended
  await waitUntil(async () => (await redisNow(obs)) >= minute + 2 * 60_000 + 50, 'the minute to expire', 70_000, 500);
  expect(await read()).toBe(0);
  expect(await scanKeys(obs, `${q.keys.tag}:mx:${minute / 60_000}`)).toEqual([]);
  // new settles write the current minute again
  await q.add(2);
  await q.ack((await q.lease())[0]!);
  expect((await q.getMetrics()).total.completed).toBe(1);
}, 180_000);
