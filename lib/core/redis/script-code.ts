import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { QUEUE_KEYS } from './keys.js';

/**
 * Lua files beside the code that calls them (paths from lib/core/), one per operation; each receives the queue keys (+ `extraKeys`),
 * or only `ownKeys` keys of its own (a key outside every queue's hash tag).
 */
const SCRIPT_FILES = {
  add: { file: 'adds/add.lua', extraKeys: 0 },
  lease: { file: 'leases/lease.lua', extraKeys: 1 },
  settle: { file: 'settles/settle.lua', extraKeys: 1 },
  touch: { file: 'leases/touch.lua', extraKeys: 0 },
  sweep: { file: 'leases/sweep.lua', extraKeys: 0 },
  // read-only: they still run when Redis refuses writes (maxmemory reached)
  getJob: { file: 'management/get-job.lua', extraKeys: 0, readOnly: true },
  counts: { file: 'management/counts.lua', extraKeys: 0, readOnly: true },
  pause: { file: 'settings/pause.lua', extraKeys: 0 },
  deadLetters: { file: 'management/dead-letters.lua', extraKeys: 0 },
  // bounded queues, groups, lifecycle, roles (lib/core/settings/queue-settings.ts)
  produce: { file: 'backpressure/produce.lua', extraKeys: 0 },
  queueAdmin: { file: 'settings/queue-admin.lua', extraKeys: 0 },
  deleteQueue: { file: 'settings/delete-queue.lua', extraKeys: 0 },
  role: { file: 'roles/role.lua', extraKeys: 0 },
  // job management (lib/core/management/management.ts)
  getJobs: { file: 'management/get-jobs.lua', extraKeys: 0, readOnly: true },
  removeJob: { file: 'management/remove-job.lua', extraKeys: 0 },
  promoteJob: { file: 'management/promote-job.lua', extraKeys: 0 },
  changePriority: { file: 'management/change-priority.lua', extraKeys: 0 },
  cleanCompleted: { file: 'management/clean-completed.lua', extraKeys: 0 },
  drain: { file: 'management/drain.lua', extraKeys: 0 },
  // a handler's progress and log lines (lib/core/progress/progress.ts)
  progress: { file: 'progress/update-progress.lua', extraKeys: 0 },
  log: { file: 'progress/log.lua', extraKeys: 0 },
  // parent/child flows (lib/core/flows/flows.ts)
  addFlow: { file: 'flows/add-flow.lua', extraKeys: 0 },
  childrenResults: { file: 'flows/children-results.lua', extraKeys: 0, readOnly: true },
  // job schedulers (lib/core/schedulers/schedulers.ts)
  schedulerRead: { file: 'schedulers/scheduler-read.lua', extraKeys: 0, readOnly: true },
  schedulerUpsert: { file: 'schedulers/scheduler-upsert.lua', extraKeys: 0 },
  schedulerAdvance: { file: 'schedulers/scheduler-advance.lua', extraKeys: 0 },
  schedulerRemove: { file: 'schedulers/scheduler-remove.lua', extraKeys: 0 },
  // the registry of queue names (lib/core/registry/registry.ts): its own key, its own slot
  registry: { file: 'registry/registry.lua', extraKeys: 0, ownKeys: 1 },
} as const;

export type ScriptName = keyof typeof SCRIPT_FILES;
const NAMES = Object.keys(SCRIPT_FILES) as ScriptName[];

/**
 * Shared code (one concern per file, in the folder of its concern), defined once in the library in
 * this order: each file uses only what the files before it define. begin.lua, last, binds
 * each call's keys and resets its per-call state.
 */
const PRELUDE = [
  'redis/keys.lua', // the queue's keys, declared and derived
  'redis/calls.lua', // Redis clock, calls with long argument lists
  'redis/record.lua', // job records
  'redis/lease-token.lua', // lease tokens: what settling reads back from them
  'progress/progress.lua', // progress and log lines of jobs
  'settles/policy.lua', // built-in policy defaults, backoff, retention in lease tokens
  'events/events.lua', // job events
  'leases/wake.lua', // wake-ups of blocked leasers
  'groups/groups.lua', // fair groups
  'rate-limits/limiter.lua', // rate limits of queues and groups
  'backpressure/bound.lua', // bounded queues and blocked producers
  'settles/ended.lua', // books of the leases a call ended
  'adds/pending.lua', // ungrouped pending jobs
  'adds/delayed.lua', // delayed jobs
  'flows/flows.lua', // parent/child flows
  'settles/failures.lua', // failed attempts and dead letters
  'settles/settle-items.lua', // ack, nack, requeue, reject
  'leases/lease-jobs.lua', // leasing
  'redis/replay.lua', // replayed lease and settle requests
  'adds/add-jobs.lua', // adding jobs
  'management/remove.lua', // where a job is, removing jobs
  'schedulers/schedulers.lua', // job schedulers
  'redis/begin.lua', // binds a call's keys, resets its state
];

const SCRIPT_DIR = new URL('../', import.meta.url);

function readLua(file: string): string {
  return readFileSync(new URL(file, SCRIPT_DIR), 'utf8');
}

export interface ScriptCode {
  /** Function library: the prelude once, then one registered function per operation. */
  library: string;
  libraryName: string;
  functionName: Record<ScriptName, string>;
  /** Each operation's own code (its .lua file), without the prelude. */
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
  const prelude = PRELUDE.map((f) => readLua(f)).join('\n');
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
