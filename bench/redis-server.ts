/**
 * A private redis-server for one benchmark run (lib/testing/redis-server.ts: free 127.0.0.1 port,
 * temp dir, no persistence; killed by `stop()`, on process exit, and by a watchdog if this
 * process dies without cleaning up). Here: its version for the report, and SIGINT/SIGTERM/
 * SIGHUP stop it and end the run.
 */
import { redisServerBinary, redisServerVersion } from '../lib/testing/redis-binary.js';
import { startRedisServer, stopAllRedisServersNow, type RedisServer } from '../lib/testing/redis-server.js';

export interface PrivateRedis extends RedisServer {
  version: string;
}

let hooksInstalled = false;

function installSignalHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping private redis-server\n`);
      stopAllRedisServersNow();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

export async function startRedis(): Promise<PrivateRedis> {
  installSignalHooks();
  const bin = redisServerBinary();
  let version = 'unknown';
  try {
    if (!bin) throw new Error('not found');
    version = redisServerVersion(bin);
  } catch (err) {
    throw new Error(`bench needs redis-server on PATH (or REDIS_SERVER_BIN): ${(err as Error).message}`);
  }
  const server = await startRedisServer({ bin, dirPrefix: 'relq-bench-redis-' });
  return Object.assign(server, { version });
}
