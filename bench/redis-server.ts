/**
 * A private redis-server for one benchmark run (tools/redis-server.ts: free 127.0.0.1 port,
 * temp dir, no persistence; killed by `stop()`, on process exit, and by a watchdog if this
 * process dies without cleaning up). Here: its version for the report, and SIGINT/SIGTERM/
 * SIGHUP stop it and end the run.
 */
import { execFileSync } from 'node:child_process';
import { redisServerBinary } from '../lib/testing/redis-binary.js';
import { stopAllRedisServersNow } from '../lib/testing/redis-process.js';
import { startRedisServer, type RedisServer } from '../tools/redis-server.js';

export interface PrivateRedis extends RedisServer {
  version: string;
}

let hooksInstalled = false;

/** `redis-server --version`'s v=..., e.g. '7.0.15'. */
function redisServerVersion(bin: string): string {
  return /v=(\S+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
}

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
