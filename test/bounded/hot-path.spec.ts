/**
 * Guards the benchmark issue's constraint: the bounded/fair/batch features must not make
 * the plain (ungrouped, unbounded) hot path more expensive. Counts the Redis commands the
 * server runs (INFO commandstats counts the commands inside scripts too) for N adds and for
 * N worker-style lease calls that also settle the previous lease.
 */
import { Queue } from '../../lib/index.js';
import { ackItem } from '../../lib/core/settle-items.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ controllable: true });
});
afterAll(async () => {
  await redis.stop();
});

async function commandStats(c: ReturnType<typeof redisClient>): Promise<Record<string, number>> {
  const info = await c.info('commandstats');
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) if (v - (a[k] ?? 0) > 0) out[k] = v - (a[k] ?? 0);
  return out;
}

test('plain add and lease+settle run the same commands as before', async () => {
  const N = 200;
  const q = new Queue<number>('hot', { connection: redis.url, prefix: uniquePrefix() });
  const obs = redisClient(redis);
  try {
    await q.add(0); // loads the scripts (EVALSHA fails once, EVAL follows)
    const [first] = await q.lease({ leaseMs: 10_000 });
    await q.ack(first!);
    const s0 = await commandStats(obs);
    for (let i = 0; i < N; i++) await q.add(i);
    const s1 = await commandStats(obs);
    const addCmds = diff(s0, s1);
    delete addCmds.info;
    // N adds: EVALSHA + HSETNX + RPUSH (+ SPUBLISH, events on) each, nothing else; the one
    // extra RPUSH is the wake-up token of the first add into the empty pending list.
    expect(addCmds).toEqual({ evalsha: N, hsetnx: N, rpush: N + 1, spublish: N });

    let prev = await q.leaseStep([], 1, 10_000, false);
    const s2 = await commandStats(obs);
    for (let i = 1; i < N; i++) {
      prev = await q.leaseStep([ackItem(prev.leases[0]!, '')], 1, 10_000, false);
    }
    const s3 = await commandStats(obs);
    const leaseCmds = diff(s2, s3);
    delete leaseCmds.info;
    const per = Object.fromEntries(Object.entries(leaseCmds).map(([k, v]) => [k, v / (N - 1)]));
    expect(per).toEqual(LEASE_BASELINE);
  } finally {
    obs.disconnect();
    await q.close();
  }
});

// Measured on the engine before bounded/fair/batch (commit 1ed02d8): one lease call that
// acks one job and leases the next.
// 16 commands: EVALSHA, TIME; settle: HMGET leases, HDEL leases, ZREM working, ZADD done,
// HSET results; lease: HMGET meta, GET replay record, ZRANGE prio, LPOP pending, HMGET jobs,
// HSET leases, ZADD working, SET replay record; SPUBLISH events.
const LEASE_BASELINE: Record<string, number> = {
  evalsha: 1,
  time: 1,
  hmget: 3,
  hdel: 1,
  zrem: 1,
  zadd: 2,
  hset: 2,
  get: 1,
  zrange: 1,
  lpop: 1,
  set: 1,
  spublish: 1,
};
