import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { startRedis, type TestRedis } from './redis.js';

const run = promisify(execFile);

export interface TestCluster {
  nodes: Array<{ host: string; port: number }>;
  client(): Cluster;
  stop(): Promise<void>;
}

/**
 * A 3-master Redis Cluster of private redis-server processes (no replicas), made with
 * `redis-cli --cluster create`. Needs redis-cli on PATH.
 */
export async function startCluster(masters = 3): Promise<TestCluster> {
  const servers: TestRedis[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(await startRedis({ controllable: true, extraArgs: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'] }));
    }
    const addrs = servers.map((s) => `${s.host}:${s.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addrs, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(
        servers.map((s) => run('redis-cli', ['-p', String(s.port), 'cluster', 'info']).then((r) => r.stdout)),
      );
      if (states.every((s) => s.includes('cluster_state:ok'))) break;
      if (Date.now() > deadline) throw new Error('cluster did not reach cluster_state:ok');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  const nodes = servers.map((s) => ({ host: s.host, port: s.port }));
  const clients: Cluster[] = [];
  return {
    nodes,
    client() {
      const c = new Cluster(nodes, { shardedSubscribers: true });
      clients.push(c);
      return c;
    },
    async stop() {
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}
