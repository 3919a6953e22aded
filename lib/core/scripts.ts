import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';
import { QUEUE_KEYS } from './keys.js';

/** Lua files in lib/scripts; each receives the queue keys (+ `extraKeys`) as KEYS. */
const SCRIPT_FILES = {
  add: { file: 'add.lua', extraKeys: 0 },
  lease: { file: 'lease.lua', extraKeys: 1 },
  settle: { file: 'settle.lua', extraKeys: 0 },
  touch: { file: 'touch.lua', extraKeys: 0 },
  sweep: { file: 'sweep.lua', extraKeys: 0 },
  getJob: { file: 'get-job.lua', extraKeys: 0 },
  counts: { file: 'counts.lua', extraKeys: 0 },
  pause: { file: 'pause.lua', extraKeys: 0 },
  deadLetters: { file: 'dead-letters.lua', extraKeys: 0 },
  // bounded queues, groups, lifecycle, roles (lib/core/queue-ext.ts)
  produce: { file: 'produce.lua', extraKeys: 0 },
  queueAdmin: { file: 'queue-admin.lua', extraKeys: 0 },
  deleteQueue: { file: 'delete-queue.lua', extraKeys: 0 },
  role: { file: 'role.lua', extraKeys: 0 },
} as const;

export type ScriptName = keyof typeof SCRIPT_FILES;

const SCRIPT_DIR = new URL('../scripts/', import.meta.url);
const INCLUDE = /^--!include (\S+)\s*$/gm;

function readScript(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  const text = readFileSync(new URL(file, SCRIPT_DIR), 'utf8');
  return text.replace(INCLUDE, (_m, inc: string) => readScript(inc, seen));
}

let sources: Record<ScriptName, string> | undefined;

/** Script sources with includes resolved; read from disk once per process. */
export function scriptSources(): Record<ScriptName, string> {
  sources ??= Object.fromEntries(
    Object.entries(SCRIPT_FILES).map(([name, s]) => [name, readScript(s.file)]),
  ) as Record<ScriptName, string>;
  return sources;
}

type ScriptCommand = (...args: Array<string | number>) => Promise<unknown>;
const installed = new WeakSet<RedisClient>();

/**
 * Registers the scripts on a client as ioredis commands: EVALSHA, with EVAL when the
 * server answers NOSCRIPT (after a restart or failover the script cache is empty).
 */
export function installScripts(client: RedisClient): void {
  if (installed.has(client)) return;
  const src = scriptSources();
  for (const [name, s] of Object.entries(SCRIPT_FILES)) {
    client.defineCommand(`relq_${name}`, { numberOfKeys: QUEUE_KEYS.length + s.extraKeys, lua: src[name as ScriptName] });
  }
  installed.add(client);
}

export function runScript(
  client: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  installScripts(client);
  const cmd = (client as unknown as Record<string, ScriptCommand>)[`relq_${name}`]!;
  return cmd.call(client, ...keys, ...args);
}
