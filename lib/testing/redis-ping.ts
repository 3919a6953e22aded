/**
 * Readiness of a Redis server without a client library: a free port to start one on, and a
 * raw RESP (AUTH +) PING until it answers.
 */
import type { ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning } from './watchdog.js';

export const REDIS_HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 10_000;

/** TLS material for the readiness PING (CA, client certificate and key). */
export interface PingTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export interface PingAuth {
  user?: string;
  password?: string;
  tls?: PingTls;
}

/** A port that was free a moment ago (listen(0), read, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, REDIS_HOST, () => {
      const addr = srv.address();
      const p = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (p ? resolve(p) : reject(new Error('could not get a free port'))));
    });
  });
}

/** Polls with raw RESP until the server answers PING (after AUTH when a password is given). */
export async function waitForPing(host: string, port: number, auth: PingAuth = {}, child?: ChildProcess, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child && !isRunning(child)) {
      throw new Error(`process exited (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      const reply = await pingOnce(host, port, auth);
      if (reply.includes('+PONG')) return;
      last = reply.trim();
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(25);
  }
  throw new Error(`no PONG within ${timeoutMs} ms (last: ${last})`);
}

function resp(...parts: string[]): string {
  return `*${parts.length}\r\n` + parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('');
}

/** One (AUTH +) PING over a raw connection; resolves with what the server answered. */
export function pingOnce(host: string, port: number, auth: PingAuth = {}, timeoutMs = 1000): Promise<string> {
  const { user, password, tls } = auth;
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
    const timer = setTimeout(() => done(new Error('PING timed out')), timeoutMs);
    sock.setEncoding('utf8');
    const login = password === undefined ? '' : user ? resp('AUTH', user, password) : resp('AUTH', password);
    sock.on(tls ? 'secureConnect' : 'connect', () => sock.write(login + resp('PING')));
    sock.on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\r\n').filter(Boolean);
      if (lines.length >= (login ? 2 : 1) || buf.startsWith('-')) done(null);
    });
    sock.on('error', (e) => done(e));
    sock.on('close', () => done(new Error(buf ? `closed after ${JSON.stringify(buf)}` : 'connection closed')));
  });
}
