/**
 * Guards the benchmark issue's constraint: the bounded/fair/batch features must not make
 * the plain (ungrouped, unbounded) hot path more expensive. Counts the Redis commands the
 * server runs (INFO commandstats counts the commands inside scripts too) for N adds and for
 * N worker-style lease calls that also settle the previous lease.
 */
import { Queue } from '../../lib/index.js';
import { ackItem } from '../../lib/core/settles/settle-items.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/engine-harness.js';
import { internalsOf } from '../../lib/core/queue/internals.js';

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

async function countCommands(
  q: Queue<number>,
  obs: ReturnType<typeof redisClient>,
  n: number,
  /** Someone listens to the queue's events: plain adds check the listeners key then. */
  listening = false,
): Promise<{ add: Record<string, number>; lease: Record<string, number> }> {
  const s0 = await commandStats(obs);
  const t0 = Date.now();
  for (let i = 0; i < n; i++) await q.add(i);
  const addMs = Date.now() - t0;
  const s1 = await commandStats(obs);
  const add = diff(s0, s1);
  delete add.info;
  // An add takes the plain path only on a reading of the queue's state under a second old
  // (lib/core/adds/queue-probe.ts). After a pause (the lease calls before the window, a
  // stalled process on a busy machine) the next add goes through produce.lua instead and
  // starts a new reading: the same writes plus TIME, HMGET meta and, where plain adds skip
  // it, the EXISTS listeners. No plain add runs TIME, so the TIMEs count those checked adds.
  const checked = add.time ?? 0;
  delete add.time;
  // The producer's reading of the queue's state (EXISTS listeners + HMGET meta), at most
  // every half second: the only HMGET of a plain add.
  const probes = (add.hmget ?? 0) - checked;
  delete add.hmget;
  add.exists = (add.exists ?? 0) - probes - (listening ? 0 : checked);
  if (add.exists === 0) delete add.exists;
  expect(probes).toBeLessThanOrEqual(1 + Math.ceil(addMs / 500));
  expect(checked).toBeLessThanOrEqual(probes);

  let prev = await internalsOf<number>(q)!.leaseStep([], 1, 10_000, false);
  const s2 = await commandStats(obs);
  for (let i = 1; i < n; i++) {
    prev = await internalsOf<number>(q)!.leaseStep([ackItem(prev.leases[0]!, '')], 1, 10_000, false);
  }
  const s3 = await commandStats(obs);
  await q.ack(prev.leases[0]!);
  const leaseCmds = diff(s2, s3);
  delete leaseCmds.info;
  const lease = Object.fromEntries(Object.entries(leaseCmds).map(([k, v]) => [k, v / (n - 1)]));
  return { add, lease };
}

test('plain add and lease+settle run the same commands as before; nothing is published while nobody listens', async () => {
  const N = 200;
  const q = new Queue<number>('hot', { connection: redis.url, prefix: uniquePrefix() });
  const obs = redisClient(redis);
  try {
    await q.add(0); // loads the scripts (the first FCALL finds no library; it is loaded)
    const [first] = await q.lease({ leaseMs: 10_000 });
    await q.ack(first!);

    const quiet = await countCommands(q, obs, N);
    // N adds: FCALL + HSETNX + RPUSH each; the one extra RPUSH is the wake-up token of
    // the first add into the empty pending list.
    expect(quiet.add).toEqual({ fcall: N, hsetnx: N, rpush: N + 1 });
    // per lease call: the baseline with the events' SPUBLISH replaced by one EXISTS
    const { spublish: _published, ...quietLease } = LEASE_BASELINE;
    expect(quiet.lease).toEqual({ ...quietLease, exists: 1 });

    // with a listener: every add and lease call checks the key and publishes
    const listener = q.events().subscribe();
    try {
      await waitUntil(async () => (await obs.exists(q.keys.byName.listeners)) === 1, 'listener announced');
      const heard = await countCommands(q, obs, N, true);
      expect(heard.add).toEqual({ fcall: N, hsetnx: N, rpush: N + 1, exists: N, spublish: N });
      // and the 'drained' check (leases/lease-jobs.lua): an LLEN per call that filled its
      // count; once the last job is leased, the grouped jobs too (the prioritized set is known
      // empty: meta np)
      expect(heard.lease).toEqual({ ...LEASE_BASELINE, exists: 1, llen: 1, hget: 1 / (N - 1) });
    } finally {
      listener.unsubscribe();
    }
  } finally {
    obs.disconnect();
    await q.close();
  }
});

test('an ack that keeps no result (keepCompletedMs 0) costs what the record removal costs: nothing for progress, logs or flows', async () => {
  const N = 100;
  const q = new Queue<number>('hot-drop', { connection: redis.url, prefix: uniquePrefix(), defaults: { keepCompletedMs: 0 } });
  const obs = redisClient(redis);
  try {
    await q.add(0);
    const [first] = await q.lease({ leaseMs: 10_000 });
    await q.ack(first!);
    const { lease } = await countCommands(q, obs, N);
    // the baseline without the retained result (ZADD done, HSET results) and the events' SPUBLISH,
    // with the record dropped instead (HDEL jobs) and the listeners EXISTS
    const { spublish: _p, ...quiet } = LEASE_BASELINE;
    expect(lease).toEqual({ ...quiet, zadd: 1, hset: 1, hdel: 2, exists: 1 });
  } finally {
    obs.disconnect();
    await q.close();
  }
});

// Measured on the engine before bounded/fair/batch (commit 1ed02d8): one lease call that
// acks one job and leases the next, less the ZRANGE of the prioritized set that a queue
// without prioritized jobs no longer makes (meta np, adds/pending.lua).
// 15 commands: FCALL (EVALSHA then), TIME; settle: HMGET leases, HDEL leases, ZREM working, ZADD done,
// HSET results; lease: HMGET meta, GET replay record, LPOP pending, HMGET jobs,
// HSET leases, ZADD working, SET replay record; SPUBLISH events.
const LEASE_BASELINE: Record<string, number> = {
  fcall: 1,
  time: 1,
  hmget: 3,
  hdel: 1,
  zrem: 1,
  zadd: 2,
  hset: 2,
  get: 1,
  lpop: 1,
  set: 1,
  spublish: 1,
};
