import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { QUEUE_KEYS } from './keys.js';
import type { AnyScript } from './script-def.js';
import { ADD_SCRIPTS } from '../adds/scripts.js';
import { BACKPRESSURE_SCRIPTS } from '../backpressure/scripts.js';
import { FLOW_SCRIPTS } from '../flows/scripts.js';
import { LEASE_SCRIPTS } from '../leases/scripts.js';
import { MANAGEMENT_SCRIPTS } from '../management/scripts.js';
import { METRICS_HISTORY_SCRIPTS } from '../metrics-history/scripts.js';
import { PARTITION_SCRIPTS } from '../partitions/scripts.js';
import { PROGRESS_SCRIPTS } from '../progress/scripts.js';
import { REGISTRY_SCRIPTS } from '../registry/scripts.js';
import { ROLE_SCRIPTS } from '../roles/scripts.js';
import { SCHEDULER_SCRIPTS } from '../schedulers/scripts.js';
import { SETTINGS_SCRIPTS } from '../settings/scripts.js';
import { SETTLE_SCRIPTS } from '../settles/scripts.js';
import { WORKER_SCRIPTS } from '../workers/scripts.js';

/**
 * Every operation of the library, as each feature defines them beside its code (its
 * scripts.ts): its Lua file, keys, arguments and reply.
 */
const SCRIPTS = [
  ...ADD_SCRIPTS,
  ...LEASE_SCRIPTS,
  ...SETTLE_SCRIPTS,
  ...MANAGEMENT_SCRIPTS,
  ...SETTINGS_SCRIPTS,
  ...BACKPRESSURE_SCRIPTS,
  ...ROLE_SCRIPTS,
  ...PROGRESS_SCRIPTS,
  ...FLOW_SCRIPTS,
  ...SCHEDULER_SCRIPTS,
  ...REGISTRY_SCRIPTS,
  ...METRICS_HISTORY_SCRIPTS,
  ...WORKER_SCRIPTS,
  ...PARTITION_SCRIPTS,
] as const;

export type ScriptName = (typeof SCRIPTS)[number]['name'];
/** The labels of every operation's errors. */
export type ScriptOp = (typeof SCRIPTS)[number]['ops'][number];
/** The labels of a queue's errors: its operations', and its event stream's. */
export type QueueOp = ScriptOp | 'events';

/** Every operation's definition (test/core/script-headers.spec.ts reads their headers). */
export function scriptDefinitions(): readonly AnyScript[] {
  return SCRIPTS;
}

/**
 * Shared code (one concern per file, in the folder of its concern), defined once in the library in
 * this order: each file uses only what the files before it define. begin.lua, last, binds
 * each call's keys and resets its per-call state.
 */
const PRELUDE = [
  'redis/keys.lua', // the queue's keys, declared and derived
  'redis/calls.lua', // Redis clock, calls with long argument lists
  'partitions/epoch-fence.lua', // a partition's adds routed with an older map
  'workers/workers.lua', // the queue's live workers
  'redis/record.lua', // job records
  'redis/lease-token.lua', // lease tokens: what settling reads back from them
  'progress/progress.lua', // progress and log lines of jobs
  'settings/tombstone.lua', // the tombstone of a deleted queue
  'settles/policy.lua', // built-in policy defaults, backoff, retention in lease tokens
  'events/events.lua', // job events
  'leases/wake.lua', // wake-ups of blocked leasers
  'groups/groups.lua', // fair groups
  'rate-limits/limiter.lua', // rate limits of queues and groups
  'backpressure/bound.lua', // bounded queues and blocked producers
  'adds/pending.lua', // ungrouped pending jobs
  'settles/ended.lua', // books of the leases a call ended
  'adds/delayed.lua', // delayed jobs
  'settles/retention.lua', // retention of finished jobs by age and count
  'flows/flows.lua', // parent/child flows
  'management/remove.lua', // where a job is, removing jobs
  'adds/deduplication.lua', // deduplication ids: who holds one, what an add that meets it does
  'adds/add-jobs.lua', // adding jobs
  'adds/deduplication-ends.lua', // a holder's end: its deduplication id free, or the add kept for then added
  'metrics-history/history.lua', // per-minute counts and run times of settled attempts
  'settles/failures.lua', // failed attempts and dead letters
  'settles/settle-items.lua', // ack, nack, requeue, reject
  'leases/lease-jobs.lua', // leasing
  'redis/replay.lua', // replayed lease and settle requests
  'management/dead-targets.lua', // the dead letters a redrive or purge takes
  'management/retried.lua', // finished jobs back to pending with a fresh attempt budget
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
  const bodies = Object.fromEntries(SCRIPTS.map((d) => [d.name, readLua(d.file)])) as Record<ScriptName, string>;
  const hash = createHash('sha1')
    .update(prelude)
    .update(SCRIPTS.map((d) => bodies[d.name]).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const libraryName = `relq_${hash}`;
  const functionName = Object.fromEntries(SCRIPTS.map((d) => [d.name, `${libraryName}_${d.name}`])) as Record<ScriptName, string>;
  const library = [
    `#!lua name=${libraryName}`,
    prelude,
    ...SCRIPTS.map(
      (d) =>
        `redis.register_function{function_name = '${functionName[d.name]}', flags = { ${d.readOnly ? "'no-writes'" : ''} },\n` +
        `callback = function(keys, args)\nbegin(keys, args${shortKeys(d)})\n${bodies[d.name]}\nend}`,
    ),
  ].join('\n');
  // As a script, the prelude's `local KEYS, ARGV` would hide the globals: take them first. The
  // operation runs in a function of its own, as in the library: Lua allows a function 200
  // locals, which the prelude's and an operation's together would pass.
  const scripts = Object.fromEntries(
    SCRIPTS.map((d) => [d.name, `local keys_, args_ = KEYS, ARGV\n${prelude}\nbegin(keys_, args_${shortKeys(d)})\nreturn (function()\n${bodies[d.name]}\nend)()`]),
  ) as Record<ScriptName, string>;
  code = { library, libraryName, functionName, bodies, scripts };
  return code;
}

/**
 * The number of keys a definition's script sees (an add of a flow across queues: more, 15 a
 * queue). An operation on one queue is passed fewer: its jobs key and its extra keys, from
 * which begin() builds the rest (redis/keys.lua expandKeys).
 */
export function keyCountOf(def: AnyScript): number {
  return 'ownKeys' in def ? def.ownKeys : QUEUE_KEYS.length + def.extraKeys;
}

/** begin()'s third argument: set for an operation on one queue (short keys, keyCountOf). */
function shortKeys(def: AnyScript): string {
  return 'ownKeys' in def ? '' : ', true';
}
