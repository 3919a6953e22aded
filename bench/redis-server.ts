/**
 * A private redis-server for one benchmark run: free 127.0.0.1 port, temp dir, no
 * persistence. Killed by `stop()`, on process exit, on SIGINT/SIGTERM, and by a detached
 * watchdog if this Node process dies without cleaning up (even SIGKILL).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateRedis {
  host: string;
  port: number;
  dir: string;
  version: string;
  bin: string;
  pid: number;
  stop(): Promise<void>;
}

const live = new Set<{ proc: ChildProcess; dir: string }>();
let hooksInstalled = false;

function killAll(): void {
  for (const s of live) {
    try {
      s.proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    rmSync(s.dir, { recursive: true, force: true });
  }
  live.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping private redis-server\n`);
      killAll();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

export async function startRedis(bin = process.env.REDIS_SERVER_BIN ?? 'redis-server'): Promise<PrivateRedis> {
  installHooks();
  let version = 'unknown';
  try {
    version = /v=(\S+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch (err) {
    throw new Error(`bench needs redis-server on PATH (or REDIS_SERVER_BIN): ${(err as Error).message}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'relq-bench-redis-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const proc = spawn(
      bin,
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--save', '',
        '--appendonly', 'no',
        '--dir', dir,
        '--logfile', join(dir, 'redis.log'),
        '--daemonize', 'no',
      ],
      { stdio: 'ignore' },
    );
    const entry = { proc, dir };
    live.add(entry);
    // Watchdog: kills the server and removes its dir once this process is gone.
    spawn(
      'sh',
      ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${proc.pid} 2>/dev/null; rm -rf '${dir}'`],
      { detached: true, stdio: 'ignore' },
    ).unref();
    let exited = false;
    proc.once('exit', () => {
      exited = true;
    });
    const deadline = Date.now() + 5000;
    while (!exited && Date.now() < deadline) {
      if (await ping(port)) {
        return {
          host: '127.0.0.1',
          port,
          dir,
          version,
          bin,
          pid: proc.pid!,
          stop: async () => {
            live.delete(entry);
            if (!exited) {
              const gone = new Promise<void>((r) => proc.once('exit', () => r()));
              proc.kill('SIGKILL');
              await gone;
            }
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    live.delete(entry);
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error('bench: could not start redis-server on a free port');
}
