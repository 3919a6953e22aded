import { decodeRecord } from '../redis/record.js';
import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import { schedulerCounts } from '../schedulers/counts.js';
import { POLICY_DEFAULTS_ARG } from '../settles/settle-items.js';
import type { FlowChildren } from '../flows/types.js';
import { toJobInfo } from './job-info.js';
import type { ParentQueueOf } from '../leases/scripts.js';
import type { DeadLetter, JobInfo, JobState, QueueCounts } from './read-types.js';
import type { DeadLetterFilter } from './types.js';

/** One job (get-job.lua), null when there is none. */
export const getJobScript = queueScript({
  name: 'getJob',
  file: 'management/get-job.lua',
  ops: ['getJob'],
  readOnly: true,
  encode: (a: { id: string; parentQueueOf: ParentQueueOf }) => [a.id],
  decode: (reply, a): JobInfo<unknown, unknown> | null => {
    const r = reply as string[];
    if (r.length === 0) return null;
    const [state, record, score, result, progress, children, started] = r as [JobState, string, string, string, string, string, string];
    const info = toJobInfo<unknown, unknown>(a.id, state, record, score, result, started, a.parentQueueOf, { progress, logs: r.slice(7) });
    if (children) info.children = JSON.parse(children) as FlowChildren; // a parent's (docs/flows.md)
    return info;
  },
});

/** Per-state counts (counts.lua); with `withAge`, the age of the oldest pending job too (undefined when none waits). */
export const countsScript = queueScript({
  name: 'counts',
  file: 'management/counts.lua',
  ops: ['counts'],
  readOnly: true,
  encode: (a: { withAge: boolean }) => (a.withAge ? ['1'] : []),
  decode: (reply, a): { counts: QueueCounts; oldestPendingAgeMs: number | undefined } => {
    const r = reply as number[];
    const age = a.withAge ? r[10]! : -1; // after waitingChildren when asked for
    return { counts: decodeCounts(r), oldestPendingAgeMs: age >= 0 ? age : undefined };
  },
});

/** Pending jobs per priority (counts-per-priority.lua): `list` the priorities, comma-separated; a count each, in that order. */
export const countsPerPriorityScript = queueScript({
  name: 'countsPerPriority',
  file: 'management/counts-per-priority.lua',
  ops: ['getCountsPerPriority'],
  readOnly: true,
  encode: (a: { priorities: string }) => [a.priorities],
  decode: (reply) => reply as number[],
});

/** counts.lua's reply: the fields by position, the schedulers' from its end. */
function decodeCounts(r: readonly number[]): QueueCounts {
  return {
    pending: r[0]!,
    working: r[1]!,
    delayed: r[2]!,
    completed: r[3]!,
    dead: r[4]!,
    paused: r[5] === 1,
    ghosts: r[6] ?? 0,
    rateLimitedMs: r[7] ?? 0,
    rateLimitedGroups: r[8] ?? 0,
    waitingChildren: r[9] ?? 0,
    ...schedulerCounts(r),
  };
}

/** One page of the dead letters from `offset`, oldest first (list-dead.lua); those whose record is gone left out. */
export const listDeadScript = queueScript({
  name: 'listDead',
  file: 'management/list-dead.lua',
  ops: ['listDead'],
  readOnly: true,
  encode: (a: { offset: number; limit: number }) => [a.offset, a.limit],
  decode: (reply): Array<DeadLetter<unknown>> => {
    const r = reply as string[];
    const letters: Array<DeadLetter<unknown>> = [];
    for (let i = 0; i < r.length; i += 3) {
      if (!r[i + 1]) continue;
      const { meta, data } = decodeRecord<unknown>(r[i + 1]!);
      const dl: DeadLetter<unknown> = { id: r[i]!, name: meta.n ?? '', data, failures: meta.f ?? 0, diedAt: Number(r[i + 2]) };
      if (meta.e !== undefined) dl.lastError = meta.e;
      letters.push(dl);
    }
    return letters;
  },
});

/** The dead letters a redrive or purge takes (dead-targets.lua): the named `ids`, or the oldest `limit` that pass the filter. */
export type DeadTargetArgs = { events: EventsFlag } & ({ ids: readonly string[] } | DeadLetterFilter);

const deadTarget = (a: DeadTargetArgs): ScriptArg[] =>
  'ids' in a ? ['ids', ...a.ids] : [a.limit, a.olderThanMs ?? '', a.name === undefined ? '' : `n${a.name}`];
const encodeDeadTarget = (a: DeadTargetArgs): ScriptArg[] => [a.events, ...deadTarget(a)];

/** Moves dead letters back to pending with a fresh attempt budget (redrive-dead.lua): the ids moved. */
export const redriveDeadScript = queueScript({
  name: 'redriveDead',
  file: 'management/redrive-dead.lua',
  ops: ['redrive'],
  encode: encodeDeadTarget,
  decode: (reply) => reply as string[],
});

/**
 * Retries one completed or dead job (retry-job.lua): the state it left, or why it was refused
 * with nothing written ('none': no such job).
 */
export const retryJobScript = queueScript({
  name: 'retryJob',
  file: 'management/retry-job.lua',
  ops: ['retry'],
  encode: (a: { events: EventsFlag; id: string }) => [a.events, a.id],
  decode: (reply): RetryReply => (reply === '' ? 'none' : (reply as RetryReply)),
});

/**
 * What retry-job.lua answers: retried from 'completed' or 'dead'; else refused: no such job
 * ('none'), a record that cannot be decoded ('!' and its state), or a job not finished (its state).
 */
export type RetryReply = 'completed' | 'dead' | 'none' | '!completed' | '!dead' | Exclude<JobState, 'completed' | 'dead'>;

/** Deletes dead letters for good (purge-dead.lua): the ids removed; `cleaned` for clean('dead') (its event). */
export const purgeDeadScript = queueScript({
  name: 'purgeDead',
  file: 'management/purge-dead.lua',
  ops: ['purge'],
  encode: (a: DeadTargetArgs & { cleaned: boolean }) => [a.events, a.cleaned ? '1' : '0', ...deadTarget(a)],
  decode: (reply) => reply as string[],
});

/**
 * One page of the jobs in one or more states (`states`, comma-separated: get-jobs.lua),
 * positions over the states in the order given; ids whose record is gone (ghosts) left out.
 */
export const getJobsScript = queueScript({
  name: 'getJobs',
  file: 'management/get-jobs.lua',
  ops: ['getJobs'],
  readOnly: true,
  encode: (a: { states: string; start: number; end: number; order: 'asc' | 'desc'; parentQueueOf: ParentQueueOf }) => [a.states, a.start, a.end, a.order],
  decode: (reply, a): Array<JobInfo<unknown, unknown>> => {
    const r = reply as Array<string | number>;
    const out: Array<JobInfo<unknown, unknown>> = [];
    let i = 0;
    for (const state of a.states.split(',') as JobState[]) {
      const end = i + 1 + Number(r[i]) * 5; // its count, then 5 fields per job
      for (i += 1; i < end; i += 5) {
        if (r[i + 1] === '') continue;
        out.push(toJobInfo<unknown, unknown>(String(r[i]), state, String(r[i + 1]), String(r[i + 2]), String(r[i + 3]), String(r[i + 4]), a.parentQueueOf));
      }
    }
    return out;
  },
});

/** Removes one job (remove-job.lua): removed, not found, or refused because it is leased. */
export const removeJobScript = queueScript({
  name: 'removeJob',
  file: 'management/remove-job.lua',
  ops: ['remove'],
  encode: (a: { events: EventsFlag; id: string; force: boolean }) => [a.events, a.id, a.force ? '1' : '0'],
  decode: (reply): 'removed' | 'none' | 'leased' => (reply === 'leased' ? 'leased' : reply === 1 ? 'removed' : 'none'),
});

/**
 * Cancels one job (cancel-job.lua): removed (not leased), its leased attempt ended dead or
 * retried, or 'none' (no such job, or it finished: nothing written). Replay-safe per `reqId`.
 */
export const cancelJobScript = queueScript({
  name: 'cancelJob',
  file: 'management/cancel-job.lua',
  ops: ['cancel'],
  extraKeys: 1,
  extraKeysOf: (keys, a) => [keys.request(a.reqId)],
  encode: (a: { events: EventsFlag; reqId: string; id: string; outcome: 'dead' | 'retry'; error: string; reason: string }) => [
    a.events,
    POLICY_DEFAULTS_ARG,
    a.id,
    a.outcome,
    a.error,
    Math.random(),
    a.reason,
  ],
  decode: (reply): 'removed' | 'dead' | 'retried' | 'none' => (reply === '' ? 'none' : (reply as 'removed' | 'dead' | 'retried')),
});

/** Makes one delayed job pending now (promote-job.lua): false when it was not delayed. */
export const promoteJobScript = queueScript({
  name: 'promoteJob',
  file: 'management/promote-job.lua',
  ops: ['promote'],
  encode: (a: { events: EventsFlag; id: string }) => [a.events, a.id],
  decode: (reply) => reply === 1,
});

/** Changes one job's priority (change-priority.lua): the job's state, '' none, 'grouped' refused. */
export const changePriorityScript = queueScript({
  name: 'changePriority',
  file: 'management/change-priority.lua',
  ops: ['changePriority'],
  encode: (a: { id: string; priority: number; lifo: boolean }) => [a.id, a.priority, a.lifo ? '1' : '0'],
  decode: (reply) => reply as JobState | 'grouped' | '',
});

/** Makes one delayed job due `delayMs` from now (change-delay.lua): false when it was not delayed. */
export const changeDelayScript = queueScript({
  name: 'changeDelay',
  file: 'management/change-delay.lua',
  ops: ['changeDelay'],
  encode: (a: { events: EventsFlag; id: string; delayMs: number }) => [a.events, a.id, a.delayMs],
  decode: (reply) => reply === 1,
});

/**
 * Replaces one job's data (update-data.lua), by id ('' token) or through its lease: written,
 * not written ('none': no such job, or a stale token), or refused because a lease holds it.
 */
export const updateDataScript = queueScript({
  name: 'updateData',
  file: 'management/update-data.lua',
  ops: ['updateData'],
  encode: (a: { id: string; token: string; data: string }) => [a.id, a.token, a.data],
  decode: (reply): 'written' | 'none' | 'leased' => (reply === 'leased' ? 'leased' : reply === 1 ? 'written' : 'none'),
});

/** Removes completed jobs before their retention ends (clean-completed.lua): their ids. */
export const cleanCompletedScript = queueScript({
  name: 'cleanCompleted',
  file: 'management/clean-completed.lua',
  ops: ['clean'],
  encode: (a: { events: EventsFlag; olderThanMs: number; limit: number }) => [a.events, a.olderThanMs, a.limit],
  decode: (reply) => reply as string[],
});

/** Removes every waiting job (drain.lua): how many. */
export const drainScript = queueScript({
  name: 'drain',
  file: 'management/drain.lua',
  ops: ['drain'],
  encode: (a: { events: EventsFlag }) => [a.events],
  decode: (reply) => reply as number,
});

export const MANAGEMENT_SCRIPTS = [
  getJobScript,
  countsScript,
  countsPerPriorityScript,
  listDeadScript,
  redriveDeadScript,
  retryJobScript,
  purgeDeadScript,
  getJobsScript,
  removeJobScript,
  cancelJobScript,
  promoteJobScript,
  changePriorityScript,
  changeDelayScript,
  updateDataScript,
  cleanCompletedScript,
  drainScript,
] as const;
