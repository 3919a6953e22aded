import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { QUEUE_KEYS } from './keys.js';

/**
 * Lua files in lib/scripts, one per operation; each receives the queue keys (+ `extraKeys`),
 * or only `ownKeys` keys of its own (a key outside every queue's hash tag).
 */
const SCRIPT_FILES = {
  add: { file: 'add.lua', extraKeys: 0 },
  lease: { file: 'lease.lua', extraKeys: 1 },
  settle: { file: 'settle.lua', extraKeys: 1 },
  touch: { file: 'touch.lua', extraKeys: 0 },
  sweep: { file: 'sweep.lua', extraKeys: 0 },
  // read-only: they still run when Redis refuses writes (maxmemory reached)
  getJob: { file: 'get-job.lua', extraKeys: 0, readOnly: true },
  counts: { file: 'counts.lua', extraKeys: 0, readOnly: true },
  pause: { file: 'pause.lua', extraKeys: 0 },
  deadLetters: { file: 'dead-letters.lua', extraKeys: 0 },
  // bounded queues, groups, lifecycle, roles (lib/core/queue/queue-settings.ts)
  produce: { file: 'produce.lua', extraKeys: 0 },
  queueAdmin: { file: 'queue-admin.lua', extraKeys: 0 },
  deleteQueue: { file: 'delete-queue.lua', extraKeys: 0 },
  role: { file: 'role.lua', extraKeys: 0 },
  // job management (lib/core/queue/management.ts)
  getJobs: { file: 'get-jobs.lua', extraKeys: 0, readOnly: true },
  removeJob: { file: 'remove-job.lua', extraKeys: 0 },
  promoteJob: { file: 'promote-job.lua', extraKeys: 0 },
  changePriority: { file: 'change-priority.lua', extraKeys: 0 },
  cleanCompleted: { file: 'clean-completed.lua', extraKeys: 0 },
  drain: { file: 'drain.lua', extraKeys: 0 },
  // a handler's progress and log lines (lib/core/queue/progress.ts)
  progress: { file: 'progress.lua', extraKeys: 0 },
  log: { file: 'log.lua', extraKeys: 0 },
  // parent/child flows (lib/core/queue/flows.ts)
  addFlow: { file: 'add-flow.lua', extraKeys: 0 },
  childrenResults: { file: 'children-results.lua', extraKeys: 0, readOnly: true },
  // job schedulers (lib/core/queue/schedulers.ts)
  schedulerRead: { file: 'scheduler-read.lua', extraKeys: 0, readOnly: true },
  schedulerUpsert: { file: 'scheduler-upsert.lua', extraKeys: 0 },
  schedulerAdvance: { file: 'scheduler-advance.lua', extraKeys: 0 },
  schedulerRemove: { file: 'scheduler-remove.lua', extraKeys: 0 },
  // the registry of queue names (lib/core/queue/registry.ts): its own key, its own slot
  registry: { file: 'registry.lua', extraKeys: 0, ownKeys: 1 },
} as const;

export type ScriptName = keyof typeof SCRIPT_FILES;
const NAMES = Object.keys(SCRIPT_FILES) as ScriptName[];

/**
 * Shared code (lib/scripts/include, one concern per file), defined once in the library in
 * this order: each file uses only what the files before it define. begin.lua, last, binds
 * each call's keys and resets its per-call state.
 */
const PRELUDE = [
  'keys.lua', // the queue's keys, declared and derived
  'calls.lua', // Redis clock, calls with long argument lists
  'record.lua', // job records
  'lease-token.lua', // lease tokens: what settling reads back from them
  'progress.lua', // progress and log lines of jobs
  'policy.lua', // built-in policy defaults, backoff, retention in lease tokens
  'events.lua', // job events
  'wake.lua', // wake-ups of blocked leasers
  'groups.lua', // fair groups
  'limiter.lua', // rate limits of queues and groups
  'bound.lua', // bounded queues and blocked producers
  'ended.lua', // books of the leases a call ended
  'pending.lua', // ungrouped pending jobs
  'delayed.lua', // delayed jobs
  'flows.lua', // parent/child flows
  'failures.lua', // failed attempts and dead letters
  'settle-items.lua', // ack, nack, requeue, reject
  'lease-jobs.lua', // leasing
  'replay.lua', // replayed lease and settle requests
  'add-jobs.lua', // adding jobs
  'remove.lua', // where a job is, removing jobs
  'schedulers.lua', // job schedulers
  'begin.lua', // binds a call's keys, resets its state
];

const SCRIPT_DIR = new URL('../../scripts/', import.meta.url);

function readLua(file: string): string {
  return readFileSync(new URL(file, SCRIPT_DIR), 'utf8');
}

export interface ScriptCode {
  /** Function library: the prelude once, then one registered function per operation. */
  library: string;
  libraryName: string;
  functionName: Record<ScriptName, string>;
  /** Each operation's own code (lib/scripts/<name>.lua), without the prelude. */
  bodies: Record<ScriptName, string>;
  /** The same operations as stand-alone scripts (EVALSHA), where functions cannot be loaded. */
  scripts: Record<ScriptName, string>;
}

let code: ScriptCode | undefined;

/**
 * The Lua code, read from disk once per process. The library's name carries a hash of its
 * code, so processes running different relq versions never call each other's functions.
 */
export function scriptCode(): ScriptCode {
  if (code) return code;
  const prelude = PRELUDE.map((f) => readLua(`include/${f}`)).join('\n');
  const bodies = Object.fromEntries(NAMES.map((n) => [n, readLua(SCRIPT_FILES[n].file)])) as Record<ScriptName, string>;
  const hash = createHash('sha1')
    .update(prelude)
    .update(NAMES.map((n) => bodies[n]).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const libraryName = `relq_${hash}`;
  const functionName = Object.fromEntries(NAMES.map((n) => [n, `${libraryName}_${n}`])) as Record<ScriptName, string>;
  const library = [
    `#!lua name=${libraryName}`,
    prelude,
    ...NAMES.map(
      (n) =>
        `redis.register_function{function_name = '${functionName[n]}', flags = { ${'readOnly' in SCRIPT_FILES[n] ? "'no-writes'" : ''} },\n` +
        `callback = function(keys, args)\nbegin(keys, args)\n${bodies[n]}\nend}`,
    ),
  ].join('\n');
  // As a script, the prelude's `local KEYS, ARGV` would hide the globals: take them first.
  const scripts = Object.fromEntries(
    NAMES.map((n) => [n, `local keys_, args_ = KEYS, ARGV\n${prelude}\nbegin(keys_, args_)\n${bodies[n]}`]),
  ) as Record<ScriptName, string>;
  code = { library, libraryName, functionName, bodies, scripts };
  return code;
}

/** The number of keys an operation's call passes. */
export function keyCount(name: ScriptName): number {
  const entry = SCRIPT_FILES[name];
  return 'ownKeys' in entry ? entry.ownKeys : QUEUE_KEYS.length + entry.extraKeys;
}
