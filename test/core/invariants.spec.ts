/**
 * Cross-cutting invariants of the engine: one hash tag per queue and nothing outside
 * the prefix, Redis server time, NOSCRIPT recovery, no KEYS/SCAN.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Redis } from 'ioredis';
import { Queue, Worker } from '../../lib/index.js';
import { scriptCode } from '../../lib/core/redis/script-code.js';
import { redisClient, startRedis, uniquePrefix } from '../support/redis.js';
import { useRedis, closeClient, commandStats, eventsReady, redisNow, scanKeys, statsDelta, untilRedisTime, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** Runs every public operation of Queue and Worker on `q` at least once. */
async function exerciseEverything(q: Queue<any, any>, obs: Redis): Promise<void> {
  const other = res.twin(q);
  const events = other.events().subscribe();
  await eventsReady(obs, q);
  const a = await q.add({ n: 1 }, { name: 'a', priority: 2, attempts: 2, backoff: { type: 'fixed', delayMs: 10, jitter: 0 } });
  await q.add('dup', { jobId: 'custom', dedupWindowMs: 50, keepCompletedMs: 20 });
  await q.add('dup', { jobId: 'custom' });
  await q.addBulk([{ data: 1 }, { data: 2, opts: { delayMs: 20 } }, { data: 3, opts: { runAt: Date.now() - 1 } }]);
  await q.add('once', { deduplication: { id: 'd', mode: 'debounce' } });
  await q.add('twice', { delayMs: 10, deduplication: { id: 'd', mode: 'debounce', keepLastIfActive: true } });
  await q.add('throttled', { deduplication: { id: 't', ttlMs: 20 } });
  await q.getDeduplicationJobId('d');
  await q.removeDeduplicationKey('t');
  await q.getJob(a.id);
  await q.counts();
  const leases = await q.lease({ count: 3, leaseMs: 2000 });
  await q.touch(leases[0]!, 1000);
  await q.ack(leases[0]!, { r: 1 });
  await q.nack(leases[1]!, { error: 'e' });
  await q.requeue(leases[2]!, { delayMs: 10 });
  await q.ackBatch(await q.lease({ count: 2 }));
  const [toReject] = await q.lease({ blockMs: 200 });
  if (toReject) await q.reject(toReject, 'no');
  const short = await q.lease({ count: 1000, leaseMs: 20 });
  await untilRedisTime(obs, Math.max(0, ...short.map((l) => l.deadline)), 'the short leases to run out');
  await q.sweep();
  await q.pause();
  await q.lease({ blockMs: 50 });
  await q.resume();
  await q.listDead();
  const dead = await q.listDead();
  if (dead[0]) await q.retryDead([dead[0].id]);
  await q.retryDead({ limit: 1 });
  const [completed] = await q.getJobs('completed');
  if (completed) await q.retry(completed.id);
  const w = res.worker(new Worker(q, async (job) => (job.attempt > 0 ? 'ok' : undefined), { blockMs: 200, leaseMs: 1000 }));
  const { id } = await q.add('for the worker');
  await q.waitForResult(id, { timeoutMs: 10_000 });
  await new Promise<void>((resolve) => q.watch(id).subscribe({ complete: resolve }));
  const x = await q.add('last', { attempts: 1 });
  await waitUntil(async () => (await q.getJob(x.id))?.state === 'completed', 'worker job', 10_000);
  await w.close();
  await q.add('to-dead', { attempts: 1 });
  const [d] = await q.lease();
  await q.reject(d!, 'x');
  await q.purgeDead({ limit: 10 });
  await untilRedisTime(obs, (await redisNow(obs)) + 60, 'the short retention and idempotency windows to end');
  await q.sweep();
  events.unsubscribe();
}

/** Keys a command touches, by asking the server (COMMAND GETKEYS); [] when it takes none. */
async function keysOf(obs: Redis, args: string[]): Promise<string[]> {
  try {
    return (await obs.call('COMMAND', 'GETKEYS', ...args)) as string[];
  } catch {
    return [];
  }
}

/** Runs `fn` under MONITOR; returns every key any command (also inside scripts) touched. */
async function keysTouchedBy(fn: () => Promise<void>): Promise<{ keys: Set<string>; commands: string[][] }> {
  const obs = res.client();
  const mon = redisClient(res.server);
  mon.on('error', () => undefined);
  const seen: string[][] = [];
  const monitor = await mon.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
  try {
    await fn();
    // MONITOR reports commands in the order they ran: once it shows this marker, it has
    // shown everything before it.
    const marker = `relq-test-marker-${uniquePrefix()}`;
    await obs.echo(marker);
    await waitUntil(() => seen.some((a) => a[0]?.toLowerCase() === 'echo' && a[1] === marker), 'MONITOR to catch up', 10_000);
  } finally {
    monitor.disconnect();
    await closeClient(mon);
  }
  const keys = new Set<string>();
  for (const args of seen) {
    const cmd = args[0]!.toLowerCase();
    if (['info', 'command', 'monitor', 'pubsub', 'client', 'hello', 'ping', 'quit', 'select'].includes(cmd)) continue;
    for (const k of await keysOf(obs, args)) keys.add(k);
  }
  return { keys, commands: seen };
}

describe('key space', () => {
  // The one key outside a queue's hash tag: the registry of the prefix's queue names
  // (lib/core/registry/registry.ts), written by calls of its own, never by a queue's script.
  test('every key any operation reads or writes carries the queue hash tag (but the registry of queue names); nothing else outside the prefix exists', async () => {
    const prefix = uniquePrefix();
    const q = res.track(new Queue('tagged', { connection: res.server.url, prefix }));
    const tag = `{${prefix}:tagged}`;
    const registry = `{${prefix}:}:queues`;
    expect(q.keys.tag).toBe(tag);
    const obs = res.client();
    const before = await commandStats(obs);
    const { keys: touched, commands: seen } = await keysTouchedBy(() => exerciseEverything(q, obs));
    const stats = statsDelta(before, await commandStats(obs));
    expect(touched.size).toBeGreaterThan(10);
    const outside = [...touched].filter((k) => !k.startsWith(`${tag}:`));
    expect(outside).toEqual([registry]);
    expect(seen.some((a) => ['fcall', 'evalsha', 'eval'].includes(a[0]!.toLowerCase()))).toBe(true);
    expect(seen.some((a) => a[0]!.toLowerCase() === 'hsetnx')).toBe(true); // commands run inside scripts were seen too

    // what exists now (SCAN here, in the test only)
    const all = await scanKeys(obs);
    const mine = all.filter((k) => k.includes(prefix));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((k) => !k.startsWith(`${tag}:`))).toEqual([registry]);
    if (res.server.source !== 'env') expect(all.filter((k) => !k.startsWith(`${tag}:`))).toEqual([registry]);

    // ...and the engine itself never ran KEYS or SCAN
    for (const cmd of ['keys', 'scan', 'hscan', 'sscan', 'zscan']) expect([cmd, stats[cmd] ?? 0]).toEqual([cmd, 0]);
  });

  test('bounded, fair, stats, exclusive and queue-lifecycle operations stay inside the hash tag too', async () => {
    const prefix = uniquePrefix();
    const tag = `{${prefix}:ext}`;
    const opts = { connection: res.server.url, prefix, bound: 50, stats: true, groupConcurrency: 1 };
    const q = res.track(new Queue<string, string>('ext', { ...opts, exclusive: { producer: true, consumer: true } }));
    const { keys } = await keysTouchedBy(async () => {
      await q.add('a', { group: 'g1' });
      await q.add('b', { group: 'g2' });
      await q.tryAdd('c');
      await q.tryAddBulk([{ data: 'd', opts: { group: 'g1' } }]);
      const leases = await q.lease({ count: 10 });
      await q.ackBatch(leases);
      await q.stats();
      await q.queueState();
      await q.closeQueue();
      await q.isQueueClosed();
      await q.reopenQueue();
      await q.sweep();
      await q.deleteQueue({ tombstoneMs: 50 });
    });
    expect(keys.size).toBeGreaterThan(10);
    expect([...keys].filter((k) => !k.startsWith(`${tag}:`))).toEqual([`{${prefix}:}:queues`]);
    const obs = res.client();
    // deleteQueue unregistered the queue: the registry of this prefix is empty, so gone
    expect((await scanKeys(obs, `*${prefix}*`)).filter((k) => !k.startsWith(`${tag}:`))).toEqual([]);
  });

  test('queueKeys: every key of the data model is `{prefix:name}:<kind>`', async () => {
    const q = res.queue('model', { prefix: 'pfx' });
    expect(q.keys.all.length).toBeGreaterThan(0);
    for (const k of q.keys.all) expect(k).toMatch(/^\{pfx:model\}:[a-z]+$/);
    expect(q.keys.request('r1')).toBe('{pfx:model}:req:r1');
  });
});

describe('no KEYS / SCAN in the engine', () => {
  function sourceFiles(dir: string): string[] {
    return readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? sourceFiles(p) : /\.(ts|lua|js|mjs)$/.test(f) ? [p] : [];
    });
  }

  // The one exception: a resize's handover looks through a partition's own job hash for the
  // unfinished jobs of the keys it gave away, about 1,000 records a call (HSCAN of one key, not
  // of the keyspace), and only while a handover is under way.
  const HANDOVER_SCAN = join('lib', 'core', 'partitions', 'handover-scan.lua');

  test('no source file under lib/ calls KEYS, SCAN or a *SCAN variant (but the handover\'s HSCAN of one hash)', () => {
    const files = sourceFiles(join(process.cwd(), 'lib'));
    expect(files.length).toBeGreaterThan(10);
    const patterns = [
      /redis\.p?call\(\s*['"](keys|scan|hscan|sscan|zscan)['"]/i, // Lua
      /\b(call|sendCommand|send_command)\(\s*['"](keys|scan|hscan|sscan|zscan)['"]/i, // ioredis generic
      /\.(scan|hscan|sscan|zscan)(Stream|Buffer|BufferStream)?\s*\(/i, // ioredis methods
      /\.keys\s*\(\s*['"`]/, // client.keys('pattern') (Map#keys takes no argument)
      /new\s+Command\(\s*['"](keys|scan)['"]/i,
    ];
    const hits: string[] = [];
    for (const f of files) {
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (patterns.some((p) => p.test(line))) hits.push(`${relative(process.cwd(), f)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits.map((h) => h.replace(/:\d+:/, ':'))).toEqual([`${HANDOVER_SCAN}: local scan = redis.call('HSCAN', K_JOBS, ARGV[1], 'COUNT', ARGV[2])`]);
  });

  test('every operation compiles as a script too (the fallback where functions cannot be loaded)', async () => {
    // A script is compiled apart from the library: the shared code in its main function, the
    // operation in one of its own (Lua allows a function 200 locals and 60 upvalues).
    const obs = res.client();
    for (const [name, src] of Object.entries(scriptCode().scripts)) {
      expect([name, await obs.script('LOAD', src).then(() => 'ok', (err: Error) => err.message)]).toEqual([name, 'ok']);
    }
  });

  test('the Lua code (library and scripts) uses neither KEYS nor SCAN commands (HSCAN: the handover step alone)', () => {
    const { library, scripts } = scriptCode();
    for (const [name, src] of [['library', library], ...Object.entries(scripts)] as Array<[string, string]>) {
      expect([name, /redis\.p?call\(\s*['"](keys|scan|sscan|zscan)['"]/i.test(src)]).toEqual([name, false]);
      const hscans = src.match(/redis\.p?call\(\s*['"]hscan['"]/gi)?.length ?? 0;
      expect([name, hscans]).toEqual([name, name === 'library' || name === 'handoverScan' ? 1 : 0]);
    }
  });
});

describe('Redis server time', () => {
  test('every time-dependent operation reads TIME itself', () => {
    const { library, bodies } = scriptCode();
    expect(library).toMatch(/function nowMs\(\)\n\s+local t = redis\.call\('TIME'\)/);
    for (const name of ['add', 'lease', 'settle', 'touch', 'sweep', 'produce'] as const) {
      expect([name, /nowMs\(\)/.test(bodies[name])]).toEqual([name, true]);
    }
  });

  test.each([
    ['an hour ahead', 3_600_000],
    ['an hour behind', -3_600_000],
  ])('delays, deadlines and expiry follow the Redis clock when the client clock is %s', async (_label, skew) => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    const realNow = Date.now;
    Date.now = () => realNow() + skew;
    try {
      // Delays and leases long enough that the checks inside them hold on a loaded machine.
      const t0 = await redisNow(obs);
      const { id } = await q.add('delayed', { delayMs: 1000 });
      await q.add('now');
      const t1 = await redisNow(obs);
      const info = await q.getJob(id);
      expect(info!.runAt).toBeGreaterThanOrEqual(t0 + 1000);
      expect(info!.runAt).toBeLessThanOrEqual(t1 + 1000);
      const leases = await q.lease({ count: 5, leaseMs: 1500 });
      const t2 = await redisNow(obs);
      expect(leases.map((l) => l.job.data)).toEqual(['now']); // the delayed one is not due yet
      expect(leases[0]!.deadline).toBeGreaterThanOrEqual(t1 + 1500);
      expect(leases[0]!.deadline).toBeLessThanOrEqual(t2 + 1500);
      expect((await q.sweep()).stalled).toBe(0);
      const t3 = await redisNow(obs);
      expect(await q.touch(leases[0]!, 1500)).toBe(true);
      const t4 = await redisNow(obs);
      expect(leases[0]!.deadline).toBeGreaterThanOrEqual(t3 + 1500);
      expect(leases[0]!.deadline).toBeLessThanOrEqual(t4 + 1500);
      await untilRedisTime(obs, info!.runAt!, 'the delayed job to be due');
      const late = await q.lease({ leaseMs: 100 });
      expect(late.map((l) => l.job.data)).toEqual(['delayed']);
      await untilRedisTime(obs, Math.max(leases[0]!.deadline, late[0]!.deadline), 'both leases to run out');
      expect((await q.sweep()).stalled).toBe(2);
    } finally {
      Date.now = realNow;
    }
  });
});

/** Every operation once, with `flush()` (the server forgetting relq's Lua) before each. */
async function everyOperationAfter(q: Queue<string, string>, flush: () => Promise<unknown>): Promise<void> {
  await flush();
  const { id } = await q.add('x', { attempts: 3, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  await flush();
  await q.addBulk([{ data: 'y' }, { data: 'z', opts: { attempts: 1 } }]);
  await flush();
  expect((await q.getJob(id))!.state).toBe('pending');
  await flush();
  expect((await q.counts()).pending).toBe(3);
  await flush();
  const [l1, l2, l3] = await q.lease({ count: 3 });
  await flush();
  expect(await q.touch(l1!, 1000)).toBe(true);
  await flush();
  expect(await q.nack(l1!, { error: 'e' })).toBe(true);
  await flush();
  expect(await q.ack(l2!, 'r')).toBe(true);
  await flush();
  expect(await q.reject(l3!, 'no')).toBe(true);
  await flush();
  expect(await q.ackBatch([])).toEqual([]);
  await flush();
  await q.sweep();
  await flush();
  await q.pause();
  await flush();
  await q.resume();
  await flush();
  expect((await q.listDead()).map((d) => d.data)).toEqual(['z']);
  await flush();
  expect(await q.retryDead({ limit: 1 })).toHaveLength(1);
  await flush();
  const [l4] = await q.lease();
  await flush();
  expect(await q.requeue(l4!)).toBe(true);
  await flush();
  expect(await q.purgeDead({ limit: 1 })).toEqual([]);
}

describe('the server refusing writes (maxmemory reached)', () => {
  test('adds and leases fail whole with RELQ_REDIS (nothing half-written); reads still answer; all works again after', async () => {
    const server = await startRedis({ controllable: true });
    const admin = redisClient(server);
    const q = new Queue<string>('oom', { connection: server.url, prefix: uniquePrefix() });
    try {
      const { id } = await q.add('before');
      const before = await scanKeys(admin);
      await admin.config('SET', 'maxmemory', '1'); // noeviction: every write is refused
      const addErr = await q.add('refused').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(addErr).toMatchObject({ code: 'RELQ_REDIS', message: expect.stringMatching(/OOM/) });
      await expect(q.lease()).rejects.toMatchObject({ code: 'RELQ_REDIS' });
      // read-only functions are flagged no-writes, so they still run
      expect(await q.counts()).toMatchObject({ pending: 1, working: 0 });
      expect((await q.getJob(id))!.state).toBe('pending');
      expect(await scanKeys(admin)).toEqual(before);
      await admin.config('SET', 'maxmemory', '0');
      const [l] = await q.lease();
      expect(l!.job.data).toBe('before');
      expect(await q.ack(l!)).toBe(true);
      expect((await q.add('after')).created).toBe(true);
    } finally {
      await q.close();
      admin.disconnect();
      await server.stop();
    }
  });
});

describe('the server forgetting the Lua code (restart without persistence, FLUSH)', () => {
  test('every operation still works after FUNCTION FLUSH before it: the library is loaded again', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const before = await commandStats(obs);
    await everyOperationAfter(q, () => obs.call('FUNCTION', 'FLUSH'));
    const stats = statsDelta(before, await commandStats(obs));
    expect(stats['function|load']).toBeGreaterThanOrEqual(15); // again after each flush followed by a call
    expect((stats.evalsha ?? 0) + (stats.eval ?? 0)).toBe(0);
  });

  test('a running Worker keeps processing across FUNCTION FLUSH', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    let done = 0;
    res.worker(new Worker<number>(q, async () => void (done += 1), { blockMs: 500 }));
    await q.add(1);
    await waitUntil(() => done === 1, 'first job');
    await obs.call('FUNCTION', 'FLUSH');
    await q.add(2);
    await waitUntil(() => done === 2, 'job after FUNCTION FLUSH');
    expect((await q.counts()).completed).toBe(2);
  });

  test('where an ACL refuses FUNCTION, the same operations run as scripts (EVALSHA, EVAL after SCRIPT FLUSH)', async () => {
    const server = await startRedis({ controllable: true });
    const admin = redisClient(server);
    try {
      await admin.call('ACL', 'SETUSER', 'nofunctions', 'on', '>secret-pw', '~*', '&*', '+@all', '-function');
      const q = new Queue<string, string>('acl', {
        connection: { host: server.host, port: server.port, username: 'nofunctions', password: 'secret-pw' },
        prefix: uniquePrefix(),
      });
      try {
        const before = await commandStats(admin);
        await everyOperationAfter(q, () => admin.script('FLUSH'));
        const stats = statsDelta(before, await commandStats(admin));
        expect(stats.eval).toBeGreaterThan(0); // the EVAL fallback after each SCRIPT FLUSH
        expect(stats.evalsha).toBeGreaterThan(0);
        expect(stats['function|load'] ?? 0).toBe(0);
        expect(await admin.call('FUNCTION', 'LIST')).toEqual([]);
      } finally {
        await q.close();
      }
    } finally {
      admin.disconnect();
      await server.stop();
    }
  });
});
