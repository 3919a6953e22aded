/**
 * Real-Redis test harness. Every test that needs Redis gets it from `startRedis()`.
 *
 * Resolution order:
 *   1. `REDIS_URL` (source 'env') — only when the caller needs neither control over the
 *      process (`controllable`) nor server options (`password`, `extraArgs`), because a
 *      shared external server can honour none of those. Tests sharing it must isolate
 *      their keys with `uniquePrefix()`.
 *   2. A private `redis-server` child process on a free 127.0.0.1 port (source 'spawned'),
 *      binary from `REDIS_SERVER_BIN` or `PATH`. No persistence, temp `--dir`, removed on stop.
 *   3. Testcontainers `redis:7` (source 'container'), only if a Docker engine answers.
 *   4. Otherwise an Error that says how to provide one of the three.
 *
 * Orphan protection for spawned servers: `stop()` (call it in afterAll) kills the server.
 * As safety nets, a `process.on('exit')` hook SIGKILLs live servers (effective outside
 * Jest; inside Jest's sandbox `process` is a copy whose 'exit' never fires), and every
 * server has a tiny detached `sh` watchdog that SIGKILLs it and removes its temp dir
 * within ~1 s after this Node process disappears for any reason (even SIGKILL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import type { CertFiles, TestCerts } from './tls.js';

export interface TestRedis {
  /** redis://127.0.0.1:PORT (for 'env': REDIS_URL as given). Never contains the password. */
  url: string;
  host: string;
  port: number;
  /** The password the server requires (spawned/container with `password`), if any. */
  password?: string;
  /** ioredis `tls` options for a TLS server (CA and the good client certificate). */
  tls?: { ca: Buffer; cert: Buffer; key: Buffer };
  /** Its data directory (AOF files with `appendfsync`). */
  dir?: string;
  source: 'env' | 'spawned' | 'container';
  /** true only for 'spawned': kill/restart/pause/resume work. */
  controllable: boolean;
  /** SIGKILL the server and wait until it is gone (spawned only; throws otherwise). */
  kill(): Promise<void>;
  /** (Kill if still running, then) start again on the SAME port and data dir; resolves when it answers PING. Data is kept only with `appendfsync`. */
  restart(): Promise<void>;
  /** SIGSTOP the server: connections stay open but nothing is answered (spawned only). */
  pause(): void;
  /** SIGCONT a paused server (spawned only). */
  resume(): void;
  /** Stop the server and remove its temp dir. Idempotent. Call in afterAll. ('env': no-op.) */
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Require a server this process can kill/restart/pause (forces 'spawned'). */
  controllable?: boolean;
  /** Start the server with `--requirepass <password>` (forces a private server). */
  password?: string;
  /** Extra `redis-server` command-line arguments, e.g. ['--maxmemory', '10mb'] (forces a private server). */
  extraArgs?: string[];
  /**
   * Serve TLS only (`--port 0 --tls-port`), with `serverCert` (default the good one) and, unless
   * `requireClientCert` is false, client certificates signed by the test CA required.
   */
  tls?: { certs: TestCerts; serverCert?: CertFiles; requireClientCert?: boolean };
  /** AOF persistence with this fsync policy; the data dir is kept across restart(). */
  appendfsync?: 'always' | 'everysec';
  /** Run a Sentinel (`--sentinel`) that monitors `master` as `name`. */
  sentinel?: { name: string; master: { host: string; port: number }; quorum: number; downAfterMs: number; failoverTimeoutMs: number };
}

const READY_TIMEOUT_MS = 10_000;
const WATCHDOG_INTERVAL_S = 1;

/** Path of the redis-server binary that would be spawned, or undefined if none is found. */
export function redisServerBinary(): string | undefined {
  const fromEnv = process.env.REDIS_SERVER_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const extra of ['/usr/bin', '/usr/local/bin', '/usr/sbin', '/opt/homebrew/bin']) {
    if (!dirs.includes(extra)) dirs.push(extra);
  }
  for (const dir of dirs) {
    const candidate = join(dir, 'redis-server');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** A key prefix unique to this call, e.g. 't1x9k2m3ab', for tests that share a server. */
export function uniquePrefix(): string {
  return 't' + Date.now().toString(36).slice(-4) + randomBytes(5).readUIntBE(0, 5).toString(36);
}

/** A new ioredis client for `r` (password filled in). Caller must `quit()`/`disconnect()` it. */
export function redisClient(r: TestRedis, options: RedisOptions = {}): Redis {
  const opts: RedisOptions = { ...options };
  if (r.password !== undefined && opts.password === undefined) opts.password = r.password;
  if (r.tls && opts.tls === undefined) opts.tls = r.tls;
  return new Redis(r.url, opts);
}

export async function startRedis(opts: StartRedisOptions = {}): Promise<TestRedis> {
  const needsPrivate =
    Boolean(opts.controllable) ||
    opts.password !== undefined ||
    (opts.extraArgs?.length ?? 0) > 0 ||
    opts.tls !== undefined ||
    opts.appendfsync !== undefined ||
    opts.sentinel !== undefined;
  const envUrl = process.env.REDIS_URL;
  if (envUrl && !needsPrivate) return fromEnv(envUrl);

  const bin = redisServerBinary();
  if (bin) return spawnRedis(bin, opts);

  if (opts.controllable) {
    throw new Error(
      'startRedis({ controllable: true }) needs a local `redis-server` binary (on PATH, or set REDIS_SERVER_BIN); ' +
        'none was found. Install one, e.g. `apt-get install -y redis-server`.',
    );
  }

  const container = await tryContainer(opts);
  if (container) return container;

  throw new Error(
    'No Redis available for the tests. Provide one of:\n' +
      '  - REDIS_URL=redis://host:port pointing at a disposable Redis >= 7 server;\n' +
      '  - a `redis-server` binary on PATH (e.g. `apt-get install -y redis-server`), or REDIS_SERVER_BIN=/path/to/redis-server;\n' +
      '  - a running Docker engine (Testcontainers will start redis:7).',
  );
}

// ---------------------------------------------------------------------------------------
// env

function fromEnv(url: string): TestRedis {
  const parsed = new URL(url);
  const notControllable = (what: string) => () => {
    throw new Error(`TestRedis.${what}() is not possible on a REDIS_URL server; use startRedis({ controllable: true })`);
  };
  return {
    url,
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    source: 'env',
    controllable: false,
    kill: async () => notControllable('kill')(),
    restart: async () => notControllable('restart')(),
    pause: notControllable('pause'),
    resume: notControllable('resume'),
    stop: async () => {},
  };
}

// ---------------------------------------------------------------------------------------
// spawned

interface Live {
  child: ChildProcess;
  watchdog?: ChildProcess;
  dir: string;
}

/** Servers spawned by this module that are not stopped yet (for the exit safety net). */
const live = new Set<Live>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const l of live) {
      killQuietly(l.watchdog, true);
      killQuietly(l.child, false);
      try {
        rmSync(l.dir, { recursive: true, force: true });
      } catch {
        /* ignore */
      }
    }
    live.clear();
  });
}

async function spawnRedis(bin: string, opts: StartRedisOptions): Promise<TestRedis> {
  installExitHook();
  const dir = await mkdtemp(join(tmpdir(), 'relq-redis-'));
  const host = '127.0.0.1';
  const state: Live = { child: undefined as unknown as ChildProcess, dir };
  let stopped = false;
  let port = 0;

  const tls = opts.tls;
  const sentinel = opts.sentinel;
  const args = (p: number): string[] => {
    if (sentinel) {
      // A Sentinel rewrites its config file: one per server, in its own dir.
      const conf = join(dir, 'sentinel.conf');
      if (!existsSync(conf)) {
        const m = `${sentinel.name} ${sentinel.master.host} ${sentinel.master.port}`;
        writeFileSync(
          conf,
          [
            `sentinel monitor ${m} ${sentinel.quorum}`,
            `sentinel down-after-milliseconds ${sentinel.name} ${sentinel.downAfterMs}`,
            `sentinel failover-timeout ${sentinel.name} ${sentinel.failoverTimeoutMs}`,
            `sentinel parallel-syncs ${sentinel.name} 1`,
          ].join('\n') + '\n',
        );
      }
      return [conf, '--sentinel', '--port', String(p), '--bind', host, '--dir', dir, '--logfile', join(dir, 'redis.log'), '--daemonize', 'no'];
    }
    const a = [
      '--port', tls ? '0' : String(p),
      '--bind', host,
      '--save', '',
      '--appendonly', opts.appendfsync ? 'yes' : 'no',
      '--dir', dir,
      '--logfile', join(dir, 'redis.log'),
      '--daemonize', 'no',
      '--enable-debug-command', 'local',
    ];
    if (opts.appendfsync) a.push('--appendfsync', opts.appendfsync);
    if (tls) {
      const cert = tls.serverCert ?? tls.certs.server;
      a.push('--tls-port', String(p), '--tls-cert-file', cert.cert, '--tls-key-file', cert.key, '--tls-ca-cert-file', tls.certs.caFile);
      a.push('--tls-auth-clients', tls.requireClientCert === false ? 'no' : 'yes');
    }
    if (opts.password !== undefined) a.push('--requirepass', opts.password);
    return a.concat(opts.extraArgs ?? []);
  };
  const pingTls = tls ? tls.certs.clientTls() : undefined;

  /** Start on `p`; resolves when PING answers, rejects (with the log tail) if the server dies first. */
  const launch = async (p: number): Promise<void> => {
    const child = spawn(bin, args(p), { stdio: 'ignore' });
    // Not ref'd: a forgotten server must never keep the test process alive.
    child.unref();
    state.child = child;
    live.add(state);
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    spawnError.catch(() => {});
    try {
      await Promise.race([waitForPing(host, p, opts.password, child, pingTls), spawnError]);
    } catch (err) {
      killQuietly(child, false);
      await waitForExit(child);
      const log = readLogTail(dir);
      throw Object.assign(new Error(`redis-server on port ${p} did not start: ${(err as Error).message}${log ? `\n--- redis.log ---\n${log}` : ''}`), {
        addrInUse: /address already in use/i.test(log),
      });
    }
    state.watchdog = startWatchdog(child.pid!, dir);
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

  const assertUsable = (what: string) => {
    if (stopped) throw new Error(`TestRedis.${what}() called after stop()`);
  };

  const kill = async (): Promise<void> => {
    assertUsable('kill');
    killQuietly(state.watchdog, true);
    state.watchdog = undefined;
    killQuietly(state.child, false);
    await waitForExit(state.child);
  };

  return {
    url: `${tls ? 'rediss' : 'redis'}://${host}:${port}`,
    host,
    port,
    password: opts.password,
    ...(pingTls ? { tls: pingTls } : {}),
    dir,
    source: 'spawned',
    controllable: true,
    kill,
    restart: async () => {
      assertUsable('restart');
      await kill();
      // The port was ours a moment ago; if something grabbed it meanwhile, retry briefly.
      for (let attempt = 1; ; attempt++) {
        try {
          await launch(port);
          return;
        } catch (err) {
          if (!(err as { addrInUse?: boolean }).addrInUse || attempt >= 20) throw err;
          await sleep(100);
        }
      }
    },
    pause: () => {
      assertUsable('pause');
      signal(state.child, 'SIGSTOP');
    },
    resume: () => {
      assertUsable('resume');
      signal(state.child, 'SIGCONT');
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      killQuietly(state.watchdog, true);
      killQuietly(state.child, false);
      await waitForExit(state.child);
      live.delete(state);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Detached `sh` that SIGKILLs redis (and removes its dir) once this Node process is gone.
 * It exits by itself when redis is gone first. Own process group, so killing `-pid`
 * also takes its `sleep`.
 */
function startWatchdog(redisPid: number, dir: string): ChildProcess | undefined {
  const script =
    'P=$1; R=$2; D=$3; ' +
    `while kill -0 "$P" 2>/dev/null; do kill -0 "$R" 2>/dev/null || exit 0; sleep ${WATCHDOG_INTERVAL_S}; done; ` +
    'kill -9 "$R" 2>/dev/null; rm -rf "$D"';
  try {
    const w = spawn('/bin/sh', ['-c', script, 'relq-redis-watchdog', String(process.pid), String(redisPid), dir], {
      stdio: 'ignore',
      detached: true,
    });
    w.on('error', () => {});
    w.unref();
    return w;
  } catch {
    return undefined; // the exit hook and stop() still apply
  }
}

function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`redis-server (pid ${child.pid}) is not running; cannot send ${sig}`);
  }
  child.kill(sig);
}

function killQuietly(child: ChildProcess | undefined, group: boolean): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (group) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    /* already gone */
  }
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (!child.pid || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function readLogTail(dir: string): string {
  try {
    return readFileSync(join(dir, 'redis.log'), 'utf8').split('\n').slice(-15).join('\n').trim();
  } catch {
    return '';
  }
}

/** A port that was free a moment ago (listen(0), read, close). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const p = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (p ? resolve(p) : reject(new Error('could not get a free port'))));
    });
  });
}

/** Poll with raw RESP until the server answers PING (after AUTH if a password is set). */
async function waitForPing(
  host: string,
  port: number,
  password: string | undefined,
  child?: ChildProcess,
  tls?: { ca: Buffer; cert: Buffer; key: Buffer },
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`process exited (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      const reply = await pingOnce(host, port, password, tls);
      if (reply.includes('+PONG')) return;
      last = reply.trim();
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(25);
  }
  throw new Error(`no PONG within ${READY_TIMEOUT_MS} ms (last: ${last})`);
}

function resp(...parts: string[]): string {
  return `*${parts.length}\r\n` + parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('');
}

function pingOnce(host: string, port: number, password: string | undefined, tls?: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve, reject) => {
    // Readiness only: a server with an expired certificate on purpose must still count as up.
    const sock: Socket = tls ? tlsConnect({ host, port, ...tls, rejectUnauthorized: false }) : createConnection({ host, port });
    let buf = '';
    const done = (err: Error | null) => {
      clearTimeout(timer);
      sock.removeAllListeners();
      sock.on('error', () => {});
      sock.destroy();
      if (err) reject(err);
      else resolve(buf);
    };
    const timer = setTimeout(() => done(new Error('PING timed out')), 1000);
    sock.setEncoding('utf8');
    sock.on(tls ? 'secureConnect' : 'connect', () => sock.write((password !== undefined ? resp('AUTH', password) : '') + resp('PING')));
    sock.on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\r\n').filter(Boolean);
      if (lines.length >= (password !== undefined ? 2 : 1) || buf.startsWith('-')) done(null);
    });
    sock.on('error', (e) => done(e));
    sock.on('close', () => done(new Error(buf ? `closed after ${JSON.stringify(buf)}` : 'connection closed')));
  });
}

// ---------------------------------------------------------------------------------------
// container

function dockerMayBeAvailable(): boolean {
  if (process.env.DOCKER_HOST || process.env.TESTCONTAINERS_HOST_OVERRIDE) return true;
  const home = homedir();
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const candidates = [
    '/var/run/docker.sock',
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
    join(home, '.testcontainers.properties'),
    uid !== undefined ? `/run/user/${uid}/docker.sock` : '',
    uid !== undefined ? `/run/user/${uid}/podman/podman.sock` : '',
  ].filter(Boolean);
  return candidates.some((c) => existsSync(c));
}

async function tryContainer(opts: StartRedisOptions): Promise<TestRedis | undefined> {
  if (!dockerMayBeAvailable()) return undefined;
  let tc: typeof import('testcontainers');
  try {
    tc = await import('testcontainers');
    await tc.getContainerRuntimeClient(); // throws when no engine answers
  } catch {
    return undefined;
  }
  const command = ['redis-server', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes'];
  if (opts.password !== undefined) command.push('--requirepass', opts.password);
  command.push(...(opts.extraArgs ?? []));
  const container = await new tc.GenericContainer('redis:7')
    .withCommand(command)
    .withExposedPorts(6379)
    .withWaitStrategy(tc.Wait.forLogMessage('Ready to accept connections'))
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(6379);
  let stopped = false;
  const notControllable = (what: string) => () => {
    throw new Error(`TestRedis.${what}() is only available for spawned servers (this one is a container)`);
  };
  const r: TestRedis = {
    url: `redis://${host}:${port}`,
    host,
    port,
    password: opts.password,
    source: 'container',
    controllable: false,
    kill: async () => notControllable('kill')(),
    restart: async () => notControllable('restart')(),
    pause: notControllable('pause'),
    resume: notControllable('resume'),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await container.stop();
    },
  };
  await waitForPing(host, port, opts.password);
  return r;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
