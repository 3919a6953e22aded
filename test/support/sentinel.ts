/**
 * A Sentinel topology of private redis-server processes: one master, one replica, three
 * Sentinels (quorum 2) that fail over within a few seconds of the master going down.
 */
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from './redis.js';
import { waitForValue } from './wait.js';

export const MASTER_SET = 'relq-master';

export interface SentinelTopology {
  /** The two data servers; which one is master changes with failovers. */
  servers: TestRedis[];
  sentinels: TestRedis[];
  /** ioredis options for the Sentinel set (relq's `connection`). */
  connection(): { sentinels: Array<{ host: string; port: number }>; name: string };
  /** The data server the Sentinels name as master now. */
  currentMaster(): Promise<TestRedis>;
  /** Resolves once every Sentinel names a master other than `old`, and that server is a master. */
  waitForFailover(old: TestRedis, timeoutMs?: number): Promise<TestRedis>;
  /** Resolves once `server` is a connected replica of the current master. */
  waitForReplica(server: TestRedis, timeoutMs?: number): Promise<void>;
  /**
   * Makes a restarted old master a replica of the current master at once, as an operator who
   * restarts it would (the Sentinels alone convert it only after it reported itself master for
   * about 8 s, a fixed delay of Redis's sentinel.c, which a busy machine stretches further).
   */
  rejoinAsReplica(server: TestRedis): Promise<void>;
  stop(): Promise<void>;
}

async function ask<T>(server: TestRedis, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

export async function startSentinelTopology(): Promise<SentinelTopology> {
  const started: TestRedis[] = [];
  try {
    const master = await startRedis({ controllable: true, extraArgs: ['--repl-diskless-sync-delay', '0'] });
    started.push(master);
    const replica = await startRedis({ extraArgs: ['--replicaof', master.host, String(master.port), '--repl-diskless-sync-delay', '0'] });
    started.push(replica);
    await waitForValue(async () => ((await ask(replica, (c) => c.info('replication'))).includes('master_link_status:up') ? true : undefined), 'the replica to sync', 15_000);
    const sentinels: TestRedis[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await startRedis({
        sentinel: { name: MASTER_SET, master, quorum: 2, downAfterMs: 1000, failoverTimeoutMs: 3000 },
      });
      started.push(s);
      sentinels.push(s);
    }
    const servers = [master, replica];
    const byPort = (port: number) => servers.find((s) => s.port === port);
    const masterPort = (s: TestRedis) => ask(s, (c) => c.call('SENTINEL', 'get-master-addr-by-name', MASTER_SET) as Promise<[string, string]>).then((r) => Number(r[1]));
    // every Sentinel knows the replica and the other Sentinels before anything fails
    await waitForValue(
      async () => {
        const views = await Promise.all(
          sentinels.map((s) => ask(s, (c) => c.call('SENTINEL', 'master', MASTER_SET) as Promise<string[]>)),
        );
        const field = (v: string[], k: string) => Number(v[v.indexOf(k) + 1]);
        return views.every((v) => field(v, 'num-slaves') >= 1 && field(v, 'num-other-sentinels') >= 2) ? true : undefined;
      },
      'the Sentinels to discover each other and the replica',
      20_000,
    );
    const topology: SentinelTopology = {
      servers,
      sentinels,
      connection: () => ({ sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })), name: MASTER_SET }),
      currentMaster: async () => byPort(await masterPort(sentinels[0]!))!,
      waitForFailover: (old, timeoutMs = 20_000) =>
        waitForValue(
          async () => {
            const ports = await Promise.all(sentinels.map((s) => masterPort(s)));
            const next = byPort(ports[0]!);
            if (!next || next === old || ports.some((p) => p !== next.port)) return undefined;
            const role = await ask(next, (c) => c.call('ROLE') as Promise<unknown[]>);
            return role[0] === 'master' ? next : undefined;
          },
          'the Sentinels to promote the replica',
          timeoutMs,
        ),
      rejoinAsReplica: async (server) => {
        const master = await topology.currentMaster();
        await ask(server, (c) => c.call('REPLICAOF', master.host, String(master.port)));
      },
      waitForReplica: async (server, timeoutMs = 20_000) => {
        await waitForValue(
          async () => ((await ask(server, (c) => c.info('replication'))).includes('master_link_status:up') ? true : undefined),
          `${server.port} to replicate the new master`,
          timeoutMs,
        );
      },
      stop: async () => {
        await Promise.all(started.map((s) => s.stop()));
      },
    };
    return topology;
  } catch (err) {
    await Promise.all(started.map((s) => s.stop()));
    throw err;
  }
}
