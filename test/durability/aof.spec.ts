/**
 * With `appendonly yes` and `appendfsync always`, every add and every ack that returned
 * before a kill -9 of redis-server is there after a restart on the same data dir. The same
 * run without persistence loses them, which shows the audit can see a loss.
 */
import { killMidStream } from '../support/kill-mid-stream.js';
import { startRedis, type TestRedis } from '../support/redis.js';

const servers: TestRedis[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

test('appendfsync always: nothing confirmed is lost', async () => {
  const redis = await startRedis({ appendfsync: 'always' });
  servers.push(redis);
  const r = await killMidStream(redis);
  expect(r.restarted).toBe(true);
  expect(r.confirmedAdds).toBeGreaterThanOrEqual(300);
  expect(r.confirmedAcks).toBeGreaterThanOrEqual(100);
  expect({ lostAdds: r.lostAdds, lostAcks: r.lostAcks }).toEqual({ lostAdds: [], lostAcks: [] });
}, 60_000);

test('without persistence the same kill loses what was confirmed (the audit sees losses)', async () => {
  const redis = await startRedis({ controllable: true });
  servers.push(redis);
  const r = await killMidStream(redis);
  expect(r.restarted).toBe(true);
  expect(r.lostAdds.length).toBe(r.confirmedAdds);
}, 60_000);
