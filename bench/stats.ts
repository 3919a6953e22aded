/** Small numeric helpers and Redis server statistics (INFO commandstats / cpu / memory). */
import type { Redis } from 'ioredis';

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function range(xs: number[]): [number, number] {
  return [Math.min(...xs), Math.max(...xs)];
}

/** Parses `INFO` text into `section field -> value` (flat: field -> value). */
function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}

export interface ServerSnapshot {
  /** command name -> calls (script-internal calls included; Redis counts them too). */
  calls: Map<string, number>;
  /** command name -> µs spent (for FCALL / EVALSHA: the whole call, inner commands included). */
  usec: Map<string, number>;
  cpuSec: number;
}

/**
 * Reads commandstats and cpu in one INFO call (Redis >= 7 takes several sections).
 * That INFO is not counted in its own output.
 */
export async function snapshot(admin: Redis): Promise<ServerSnapshot> {
  const info = parseInfo(await admin.info('cpu', 'commandstats'));
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const [k, v] of info) {
    if (!k.startsWith('cmdstat_')) continue;
    const m = /calls=(\d+),usec=(\d+)/.exec(v);
    if (m) {
      calls.set(k.slice('cmdstat_'.length), Number(m[1]));
      usec.set(k.slice('cmdstat_'.length), Number(m[2]));
    }
  }
  const cpuSec = Number(info.get('used_cpu_user') ?? 0) + Number(info.get('used_cpu_sys') ?? 0);
  return { calls, usec, cpuSec };
}

/**
 * Starts a measurement window: CONFIG RESETSTAT, then a cpu reading. The admin calls
 * that land inside the window (1 config|resetstat, 1 info) are subtracted by `window`.
 */
export async function openWindow(admin: Redis): Promise<ServerSnapshot> {
  await admin.config('RESETSTAT');
  return snapshot(admin);
}

export interface WindowStats {
  /** All commands Redis executed in the window, except the bench's own admin calls. */
  total: number;
  /** Per command. */
  calls: Record<string, number>;
  /** µs per command (script commands: the whole script). */
  usec: Record<string, number>;
  redisCpuSec: number;
}

export async function closeWindow(admin: Redis, start: ServerSnapshot): Promise<WindowStats> {
  const end = await snapshot(admin);
  const calls: Record<string, number> = {};
  let total = 0;
  for (const [cmd, n0] of end.calls) {
    let n = n0;
    if (cmd === 'config|resetstat') n -= 1;
    if (cmd === 'info') n -= 1;
    if (n > 0) {
      calls[cmd] = n;
      total += n;
    }
  }
  const usec: Record<string, number> = {};
  for (const [cmd, u] of end.usec) if (calls[cmd]) usec[cmd] = u;
  return { total, calls, usec, redisCpuSec: end.cpuSec - start.cpuSec };
}

export async function usedMemory(admin: Redis): Promise<number> {
  const info = parseInfo(await admin.info('memory'));
  return Number(info.get('used_memory'));
}

/** What several readings of a paired run add up to (each build's turns): commands, their time, Redis CPU. */
export class WindowTally {
  private readonly calls: Record<string, number> = {};
  private readonly usec: Record<string, number> = {};
  private redisCpuSec = 0;

  /** Adds what Redis did between snapshots `a` and `b`, less the INFO that read `a` (an INFO is not in its own reading). */
  add(a: ServerSnapshot, b: ServerSnapshot): void {
    for (const [cmd, n1] of b.calls) {
      const n = n1 - (a.calls.get(cmd) ?? 0) - (cmd === 'info' ? 1 : 0);
      if (n > 0) this.calls[cmd] = (this.calls[cmd] ?? 0) + n;
      const u = (b.usec.get(cmd) ?? 0) - (a.usec.get(cmd) ?? 0);
      if (u > 0) this.usec[cmd] = (this.usec[cmd] ?? 0) + u;
    }
    this.redisCpuSec += b.cpuSec - a.cpuSec;
  }

  get stats(): WindowStats {
    const total = Object.values(this.calls).reduce((x, y) => x + y, 0);
    return { total, calls: this.calls, usec: this.usec, redisCpuSec: this.redisCpuSec };
  }
}

/**
 * Bytes that the keys of queue `name` take (MEMORY USAGE of each, every element counted):
 * unlike a used_memory difference, it sees neither client buffers nor the other queues on
 * the server. SCAN is fine here: the bench's own server holds a few queues' keys.
 */
export async function queueMemory(admin: Redis, name: string): Promise<number> {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `{*:${name}}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) bytes += Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  } while (cursor !== '0');
  return bytes;
}

export function fmt(x: number, digits?: number): string {
  if (!Number.isFinite(x)) return '–';
  const d = digits ?? (Math.abs(x) >= 1000 ? 0 : Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}
