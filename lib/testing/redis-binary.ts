/** Finding the redis-server binary a private test server is started from. */
import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where a binary is looked for after PATH (package managers' usual places). */
const USUAL_DIRS = ['/usr/bin', '/usr/local/bin', '/usr/sbin', '/opt/homebrew/bin'];

/** No redis-server binary to start: says how to install one or where to point instead. */
export class RedisServerNotFoundError extends Error {
  override readonly name = 'RedisServerNotFoundError';

  constructor(where: string) {
    super(
      `redis-server not found (${where}): install it (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis), ` +
        'set REDIS_SERVER_BIN to its path, or set REDIS_URL to a Redis the tests may use',
    );
  }
}

/** Path of the redis-server binary to spawn (REDIS_SERVER_BIN, else PATH and the usual dirs), or undefined. */
export function redisServerBinary(): string | undefined {
  const fromEnv = process.env.REDIS_SERVER_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const extra of USUAL_DIRS) {
    if (!dirs.includes(extra)) dirs.push(extra);
  }
  for (const dir of dirs) {
    const candidate = join(dir, 'redis-server');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The binary to spawn, or a RedisServerNotFoundError that says where it looked. */
export function requireRedisServerBinary(): string {
  const bin = redisServerBinary();
  if (bin) return bin;
  const fromEnv = process.env.REDIS_SERVER_BIN;
  throw new RedisServerNotFoundError(fromEnv ? `REDIS_SERVER_BIN=${fromEnv} is not an executable file` : 'not on PATH nor in ' + USUAL_DIRS.join(', '));
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}
