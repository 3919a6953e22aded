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
 *      Started by tools/redis-server.ts (on relq/testing's private server process), which the
 *      benchmarks and `npm run sample` use too.
 *   3. Testcontainers `redis:7` (source 'container'), only if a Docker engine answers.
 *   4. Otherwise an Error that says how to provide one of the three.
 *
 * Orphan protection for spawned servers: `stop()` (call it in afterAll) kills the server.
 * As safety nets, a `process.on('exit')` hook SIGKILLs live servers (effective outside
 * Jest; inside Jest's sandbox `process` is a copy whose 'exit' never fires), and every
 * server has a tiny detached `sh` watchdog that SIGKILLs it and removes its temp dir
 * within ~1 s after this Node process disappears for any reason (even SIGKILL).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { redisServerBinary } from '../../lib/testing/redis-binary.js';
import { REDIS_HOST, waitForPing } from '../../lib/testing/redis-ping.js';
import { startRedisServer } from '../../tools/redis-server.js';
import type { CertFiles, TestCerts } from './tls.js';

export { redisServerBinary };

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

/** Ids of the connections blocked in a BLPOP on the server `c` talks to (CLIENT LIST). */
export async function blockedPopIds(c: Redis): Promise<string[]> {
  const list = String(await c.client('LIST')).split('\n');
  return list.filter((l) => / cmd=blpop /.test(l)).map((l) => /\bid=(\d+)/.exec(l)![1]!);
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
// spawned (tools/redis-server.ts owns the process: free port, temp dir, watchdog, stop)

async function spawnRedis(bin: string, opts: StartRedisOptions): Promise<TestRedis> {
  const tls = opts.tls;
  const pingTls = tls ? tls.certs.clientTls() : undefined;
  const server = await startRedisServer({ bin, args: (port, dir) => serverArgs(opts, port, dir), password: opts.password, tls: pingTls });
  return {
    url: `${tls ? 'rediss' : 'redis'}://${server.host}:${server.port}`,
    host: server.host,
    port: server.port,
    password: opts.password,
    ...(pingTls ? { tls: pingTls } : {}),
    dir: server.dir,
    source: 'spawned',
    controllable: true,
    kill: () => server.kill(),
    restart: () => server.restart(),
    pause: () => server.pause(),
    resume: () => server.resume(),
    stop: () => server.stop(),
  };
}

/** redis-server arguments for `opts` on `port` with data in `dir`. */
function serverArgs(opts: StartRedisOptions, port: number, dir: string): string[] {
  const { tls, sentinel } = opts;
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
    return [conf, '--sentinel', '--port', String(port), '--bind', REDIS_HOST, '--dir', dir, '--logfile', join(dir, 'redis.log'), '--daemonize', 'no'];
  }
  const a = [
    '--port', tls ? '0' : String(port),
    '--bind', REDIS_HOST,
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
    a.push('--tls-port', String(port), '--tls-cert-file', cert.cert, '--tls-key-file', cert.key, '--tls-ca-cert-file', tls.certs.caFile);
    a.push('--tls-auth-clients', tls.requireClientCert === false ? 'no' : 'yes');
  }
  if (opts.password !== undefined) a.push('--requirepass', opts.password);
  return a.concat(opts.extraArgs ?? []);
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
  await waitForPing(host, port, { password: opts.password });
  return r;
}
