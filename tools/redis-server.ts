/**
 * The repository's private `redis-server` launcher: the test harness (test/support/redis.ts),
 * the benchmarks, `npm run sample` and tools/lua-instructions.mjs start theirs here. The process
 * itself (free port, temp dir, PING, watchdog, exit hook) is the one `startTestRedis()` of
 * relq/testing starts (lib/testing/redis-process.ts); this adds what the fault tests need and
 * the package does not ship: AUTH and TLS servers, the pid, kill, restart on the same port and
 * dir, pause and resume.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisProcess, type RedisProcessOptions } from '../lib/testing/redis-process.js';
import type { PingTls } from '../lib/testing/redis-ping.js';
import { isRunning } from '../lib/testing/watchdog.js';

export interface RedisServerOptions extends Omit<RedisProcessOptions, 'auth'> {
  /** The readiness PING: AUTH password and TLS, as the arguments configure the server. */
  password?: string;
  tls?: PingTls;
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** Its data dir (removed by stop()). */
  readonly dir: string;
  readonly bin: string;
  /** The running redis-server's pid (a restart() changes it). */
  readonly pid: number;
  /** SIGKILL the server and wait until it is gone (the dir stays). */
  kill(): Promise<void>;
  /** (Kill if still running, then) start again on the same port and dir; resolves when it answers PING. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open but nothing is answered. */
  pause(): void;
  /** SIGCONT a paused server. */
  resume(): void;
  /** Kill the server and remove its dir. Idempotent. */
  stop(): Promise<void>;
}

export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServer> {
  const { password, tls, ...rest } = opts;
  const server = await startRedisProcess({ ...rest, auth: { password, tls } });
  let stopped = false;

  const assertUsable = (what: string) => {
    if (stopped) throw new Error(`redis-server ${what}() called after stop()`);
  };
  const signal = (sig: NodeJS.Signals) => {
    const { child } = server;
    if (!isRunning(child)) throw new Error(`redis-server (pid ${child.pid}) is not running; cannot send ${sig}`);
    child.kill(sig);
  };

  return {
    host: server.host,
    port: server.port,
    dir: server.dir,
    bin: server.bin,
    get pid() {
      return server.child.pid!;
    },
    kill: async () => {
      assertUsable('kill');
      await server.kill();
    },
    restart: async () => {
      assertUsable('restart');
      await server.kill();
      // The port was ours a moment ago; if something grabbed it meanwhile, retry briefly.
      for (let attempt = 1; ; attempt++) {
        try {
          await server.relaunch();
          return;
        } catch (err) {
          if (!(err as { addrInUse?: boolean }).addrInUse || attempt >= 20) throw err;
          await sleep(100);
        }
      }
    },
    pause: () => {
      assertUsable('pause');
      signal('SIGSTOP');
    },
    resume: () => {
      assertUsable('resume');
      signal('SIGCONT');
    },
    stop: () => {
      stopped = true;
      return server.stop();
    },
  };
}
