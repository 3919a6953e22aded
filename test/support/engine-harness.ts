/**
 * The engine specs' kit (test/core and the feature folders): a private Redis per spec file
 * with everything a test opened closed after it, and ways to observe that Redis (INFO, SCAN,
 * TIME, CLIENT LIST). Redis always comes from test/support/redis.ts; the engine itself never
 * uses these helpers.
 */
import type { Redis } from 'ioredis';
import { Queue } from '../../lib/index.js';
import type { QueueOptions } from '../../lib/index.js';
import type { BatchWorker, Worker } from '../../lib/index.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from './redis.js';

export { sleep, waitUntil } from './wait.js';
import { waitUntil } from './wait.js';

/**
 * Adds `n` jobs one at a time to a queue whose idle consumer processes them; returns the
 * commands each cost, its settle included (`processed()` counts the consumer's jobs).
 * The snapshots are back to back, so every command lands in exactly one job's count.
 */
export async function commandsPerIdleAdd(q: Queue<number, any>, obs: Redis, processed: () => number, n = 5): Promise<Array<Record<string, number>>> {
  const deltas: Array<Record<string, number>> = [];
  await consumerIdle(obs, q, 'consumer idle before the first add');
  let before = await commandStats(obs);
  for (let i = 1; i <= n; i++) {
    const start = processed();
    const completed = await obs.zcard(q.keys.byName.done);
    await q.add(i);
    await waitUntil(() => processed() === start + 1, `job ${i}`, 10_000);
    // its outcome is settled, and the consumer waits on Redis again
    await waitUntil(
      async () => (await obs.zcard(q.keys.byName.done)) === completed + 1 && (await blockedClients(obs)) >= 1,
      `job ${i} settled and the consumer idle again`,
      10_000,
    );
    const after = await commandStats(obs);
    deltas.push(statsDelta(before, after));
    before = after;
  }
  return deltas;
}

/** Clients blocked in a blocking command right now (CLIENT LIST flag `b`). */
export async function blockedClients(c: Redis): Promise<number> {
  const list = (await c.client('LIST')) as string;
  return list.split('\n').filter((l) => /\bflags=[^ ]*b/.test(l)).length;
}

/**
 * Waits until nothing of `q` is pending or leased and at least `blocked` clients wait in a
 * blocking command: a consumer that ran everything and now waits on Redis.
 */
export async function consumerIdle(obs: Redis, q: Queue<any, any>, what = 'consumer idle', blocked = 1): Promise<void> {
  await waitUntil(
    async () => {
      const c = await q.counts();
      return c.pending === 0 && c.working === 0 && (await blockedClients(obs)) >= blocked;
    },
    what,
    10_000,
  );
}

/** Waits until the Redis server's clock has passed epoch ms `ms`. */
export async function untilRedisTime(c: Redis, ms: number, what = `Redis time past ${ms}`, timeoutMs = 10_000): Promise<void> {
  await waitUntil(async () => (await redisNow(c)) > ms, what, timeoutMs);
}

/**
 * Holds handlers until opened: `enter(weight)` counts a handler (or a batch of `weight`
 * jobs) as running, the most at once in `most`, and waits; `openUntil(n)` lets them through
 * until `n` have passed.
 */
export class Gate {
  running = 0;
  most = 0;
  private passed = 0;
  private readonly waiting: Array<() => void> = [];

  async enter(weight = 1): Promise<void> {
    this.running += weight;
    this.most = Math.max(this.most, this.running);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running -= weight;
  }

  openUntil(n: number, what: string): Promise<void> {
    return waitUntil(() => {
      for (let open = this.waiting.shift(); open; open = this.waiting.shift()) {
        open();
        this.passed += 1;
      }
      return this.passed === n;
    }, what);
  }
}

/** Rejects if `p` does not settle within `ms`. */
export function within<T>(p: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * One private Redis for the whole spec file; every queue, worker and client made through
 * the returned Resources is closed after each test, and the server after the file.
 */
export function useRedis(): Resources {
  let redis: TestRedis | undefined;
  const res = new Resources(() => redis!);
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(() => res.closeAll());
  afterAll(async () => {
    await redis?.stop();
  });
  return res;
}

/** Everything a test opened, closed in afterEach (queues, workers, raw clients). */
export class Resources {
  private readonly workers: Array<Worker<any, any> | BatchWorker<any, any>> = [];
  private readonly queues: Array<Queue<any, any>> = [];
  private readonly clients: Redis[] = [];

  constructor(private readonly redis: () => TestRedis) {}

  /** The Redis server these resources use. */
  get server(): TestRedis {
    return this.redis();
  }

  /** A queue on its own connection, with a unique prefix unless given. */
  queue<D = any, R = any>(name = 'q', opts: QueueOptions = {}): Queue<D, R> {
    const q = new Queue<D, R>(name, { connection: this.redis().url, prefix: uniquePrefix(), ...opts });
    this.queues.push(q);
    return q;
  }

  /** A second Queue object (own connection) on the same queue as `q`. */
  twin<D = any, R = any>(q: Queue<any, any>, opts: QueueOptions = {}): Queue<D, R> {
    return this.queue<D, R>(q.name, { prefix: q.prefix, ...opts });
  }

  worker<W extends Worker<any, any> | BatchWorker<any, any>>(w: W): W {
    this.workers.push(w);
    return w;
  }

  track<Q extends Queue<any, any>>(q: Q): Q {
    this.queues.push(q);
    return q;
  }

  /** A raw ioredis client for observing the server. */
  client(): Redis {
    const c = redisClient(this.redis(), { maxRetriesPerRequest: 1 });
    c.on('error', () => undefined);
    this.clients.push(c);
    return c;
  }

  async closeAll(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.close({ drainTimeoutMs: 0 }).catch(() => undefined)));
    const queues = this.queues.splice(0);
    await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
    const clients = this.clients.splice(0);
    await Promise.all(clients.map((c) => closeClient(c)));
  }
}

export async function closeClient(c: Redis): Promise<void> {
  if (c.status === 'end') return;
  if (c.status === 'ready') await c.quit().catch(() => c.disconnect());
  else c.disconnect();
}

/** `INFO commandstats` as { command: calls }. */
export async function commandStats(c: Redis): Promise<Record<string, number>> {
  const info = await c.info('commandstats');
  const out: Record<string, number> = {};
  for (const line of info.split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** Calls per command between two commandStats snapshots (only commands that changed). */
export function statsDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** Calls of relq's Lua (FCALL, or EVALSHA / EVAL where functions are refused) in a delta. */
export function scriptCalls(d: Record<string, number>): number {
  return (d.fcall ?? 0) + (d.evalsha ?? 0) + (d.eval ?? 0);
}

/** Script calls and blocking pops in a delta: what the engine sent. */
export function engineCalls(d: Record<string, number>): number {
  return scriptCalls(d) + (d.blpop ?? 0);
}

/** All keys matching `pattern` (SCAN, in tests only). */
export async function scanKeys(c: Redis, pattern = '*'): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

/** Keys of one queue (everything under its prefix). */
export function queueKeysIn(c: Redis, q: Queue<any, any>): Promise<string[]> {
  return scanKeys(c, `*${q.prefix}*`);
}

/** Redis server time in ms. */
export async function redisNow(c: Redis): Promise<number> {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Waits until some client is subscribed to the queue's sharded event channel. */
export async function eventsReady(c: Redis, q: Queue<any, any>, subscribers = 1): Promise<void> {
  await waitUntil(
    async () => {
      const r = (await c.call('PUBSUB', 'SHARDNUMSUB', q.keys.byName.events)) as [string, number];
      // subscribed, and announced: scripts publish only while the listeners key exists
      return Number(r[1]) >= subscribers && (await c.exists(q.keys.byName.listeners)) === 1;
    },
    'event subscription',
    5000,
  );
}
