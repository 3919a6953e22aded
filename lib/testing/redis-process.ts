/**
 * A private `redis-server` process, as `startTestRedis()` (./test-redis.ts) starts one; the
 * repository's own launcher (tools/redis-server.ts) builds on it. Not part of relq/testing's
 * exports.
 *
 * A server gets a free 127.0.0.1 port, its own temp dir (data, redis.log), no persistence unless
 * its arguments ask for it, and counts as started once it answers PING. It leads its own process
 * group (a terminal's Ctrl+C does not reach it; a group kill also takes a fork such as an AOF
 * rewrite). `stop()` SIGKILLs the group and removes the dir. Safety nets: a `process.on('exit')`
 * hook does the same for every server not stopped yet (outside Jest; inside Jest's sandbox
 * `process` is a copy whose 'exit' never fires), and a watchdog (./watchdog.ts) does it
 * within about a second after this process disappears for any reason, even SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning, killGroup, startWatchdog, stopWatchdog, waitForExit } from './watchdog.js';
import { requireRedisServerBinary } from './redis-binary.js';
import { freePort, REDIS_HOST, waitForPing, type PingAuth } from './redis-ping.js';

export interface RedisProcessOptions {
  /** The binary (default: `redisServerBinary()`; a RedisServerNotFoundError when there is none). */
  bin?: string;
  /** redis-server arguments for a port and the server's dir (default: `plainArgs`). */
  args?: (port: number, dir: string) => string[];
  /** The readiness PING: AUTH password and TLS, as the arguments configure the server. */
  auth?: PingAuth;
  /** Name prefix of the temp dir (default 'relq-redis-'). */
  dirPrefix?: string;
}

export interface RedisProcess {
  readonly host: string;
  readonly port: number;
  /** Its data dir (removed by stop()). */
  readonly dir: string;
  readonly bin: string;
  /** The running server (a relaunch() replaces it). */
  readonly child: ChildProcess;
  /** SIGKILLs the server and waits until it is gone (the dir stays). */
  kill(): Promise<void>;
  /**
   * Starts the server again on the same port and dir; resolves when it answers PING. Rejects
   * (with `addrInUse: true` when the port was taken meanwhile) if it does not start.
   */
  relaunch(): Promise<void>;
  /** Kills the server and removes its dir. Idempotent. */
  stop(): Promise<void>;
}

/** A server without persistence on `port`, data and log in `dir`. */
export function plainArgs(port: number, dir: string): string[] {
  return [
    '--port', String(port),
    '--bind', REDIS_HOST,
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--logfile', join(dir, 'redis.log'),
    '--daemonize', 'no',
  ];
}

interface Live {
  child: ChildProcess;
  watchdog?: ChildProcess;
  dir: string;
}

/** Servers started here and not stopped yet (for the exit hook). */
const live = new Set<Live>();
let exitHookInstalled = false;

/** Synchronously SIGKILLs every server not stopped yet and removes its dir (exit and signal handlers). */
export function stopAllRedisServersNow(): void {
  for (const l of live) {
    stopWatchdog(l.watchdog);
    if (l.child.pid && isRunning(l.child)) killGroup(l.child.pid, 'SIGKILL');
    try {
      rmSync(l.dir, { recursive: true, force: true });
    } catch {
      /* ignore */
    }
  }
  live.clear();
}

export async function startRedisProcess(opts: RedisProcessOptions = {}): Promise<RedisProcess> {
  const bin = opts.bin ?? requireRedisServerBinary();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', stopAllRedisServersNow);
  }
  const args = opts.args ?? plainArgs;
  const dir = await mkdtemp(join(tmpdir(), opts.dirPrefix ?? 'relq-redis-'));
  const state: Live = { child: undefined as unknown as ChildProcess, dir };
  const auth = opts.auth ?? {};
  let port = 0;
  let stopped = false;

  /** Start on `p`; resolves when PING answers, rejects (with the log tail) if the server dies first. */
  const launch = async (p: number): Promise<void> => {
    const child = spawn(bin, args(p, dir), { stdio: 'ignore', detached: true });
    // Not ref'd: a forgotten server must never keep its owner alive.
    child.unref();
    state.child = child;
    state.watchdog = child.pid ? startWatchdog({ pid: child.pid, group: true, dir }) : undefined;
    live.add(state);
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    spawnError.catch(() => {});
    try {
      await Promise.race([waitForPing(REDIS_HOST, p, auth, child), spawnError]);
    } catch (err) {
      stopWatchdog(state.watchdog);
      if (child.pid) killGroup(child.pid, 'SIGKILL');
      await waitForExit(child);
      const log = readLogTail(dir);
      throw Object.assign(new Error(`redis-server on port ${p} did not start: ${(err as Error).message}${log ? `\n--- redis.log ---\n${log}` : ''}`), {
        addrInUse: /address already in use/i.test(log),
      });
    }
  };

  try {
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await launch(port);
        break;
      } catch (err) {
        if (!(err as { addrInUse?: boolean }).addrInUse || attempt >= 5) throw err;
      }
    }
  } catch (err) {
    live.delete(state);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const kill = async (): Promise<void> => {
    stopWatchdog(state.watchdog);
    state.watchdog = undefined;
    if (state.child.pid && isRunning(state.child)) killGroup(state.child.pid, 'SIGKILL');
    await waitForExit(state.child);
  };

  return {
    host: REDIS_HOST,
    port,
    dir,
    bin,
    get child() {
      return state.child;
    },
    kill,
    relaunch: () => launch(port),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await kill();
      live.delete(state);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readLogTail(dir: string): string {
  try {
    return readFileSync(join(dir, 'redis.log'), 'utf8').split('\n').slice(-15).join('\n').trim();
  } catch {
    return '';
  }
}
