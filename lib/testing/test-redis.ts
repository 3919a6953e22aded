/**
 * A Redis for integration tests: a private redis-server on a free port (./redis-process.ts, on
 * which the project's own launcher builds), or the server REDIS_URL names.
 */
import { ValidationError } from '../core/errors.js';
import { assertConnection } from '../core/redis/connection.js';
import { assertBoolean, assertOptions } from '../core/validate.js';
import { plainArgs, startRedisProcess } from './redis-process.js';

export interface TestRedisOptions {
  /** Extra redis-server arguments, e.g. `['--maxmemory', '10mb']`. With them REDIS_URL is not used. */
  args?: string[];
  /**
   * Use the server REDIS_URL names when it is set (default true, unless `args` are given):
   * `stop()` then leaves it running, and tests sharing it should use their own queue names or prefix.
   */
  useRedisUrl?: boolean;
}

export interface TestRedis {
  /** `redis://127.0.0.1:<port>`, or REDIS_URL as given. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** 'spawned': a private server that `stop()` ends; 'env': the server of REDIS_URL. */
  readonly source: 'spawned' | 'env';
  /**
   * Kills a private server and removes its temp dir (idempotent). Call it in `afterAll`, after
   * every connection to it is closed (`app.close()`, `queue.close()`, `worker.close()`).
   */
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server on a free 127.0.0.1 port, without persistence, in a temp dir.
 * It is stopped by `stop()`, and, should the test process die before that (even by SIGKILL),
 * by a watchdog within about a second, temp dir included. Without a redis-server binary it
 * throws a RedisServerNotFoundError that says how to install one or set REDIS_URL.
 */
export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  assertOptions('options', options, ['args', 'useRedisUrl']);
  const extra = options.args ?? [];
  if (!Array.isArray(extra) || !extra.every((a) => typeof a === 'string')) throw new ValidationError('options.args', 'must be an array of strings');
  if (options.useRedisUrl !== undefined) assertBoolean('options.useRedisUrl', options.useRedisUrl);
  if (options.useRedisUrl && extra.length > 0) throw new ValidationError('options', 'args are for a private server: give args or useRedisUrl, not both');
  const envUrl = process.env.REDIS_URL;
  if (envUrl && (options.useRedisUrl ?? extra.length === 0)) {
    assertConnection('REDIS_URL', envUrl); // the engine's check: no password in its message
    const u = new URL(envUrl);
    return { url: envUrl, host: u.hostname || '127.0.0.1', port: Number(u.port || 6379), source: 'env', stop: async () => {} };
  }
  const server = await startRedisProcess({ args: (port, dir) => [...plainArgs(port, dir), ...extra], dirPrefix: 'relq-test-redis-' });
  return { url: `redis://${server.host}:${server.port}`, host: server.host, port: server.port, source: 'spawned', stop: () => server.stop() };
}
