import { decodeRecord } from '../redis/record.js';
import type { JobInfo, JobProgress, JobState } from './read-types.js';
import type { ParentQueueOf } from '../leases/scripts.js';

/**
 * A job as getJob() and getJobs() answer it, from what get-job.lua and get-jobs.lua read:
 * its state, record, score in that state ('' for pending), when completed its stored result
 * ('{"at":ms,"d":ms since its lease began,"r":json or null}', '' for none), and when working
 * the start of its lease ('' when unknown).
 */
export function toJobInfo<Data, Result>(
  id: string,
  state: JobState,
  record: string,
  score: string,
  result: string | undefined,
  started: string,
  parentQueueOf: ParentQueueOf,
  notes?: JobNotes,
): JobInfo<Data, Result> {
  const { meta, data } = decodeRecord<Data>(record);
  const failures = meta.f ?? 0;
  const requeues = meta.r ?? 0;
  const info: JobInfo<Data, Result> = {
    id,
    name: meta.n ?? '',
    state,
    data,
    priority: meta.p ?? 0,
    failures,
    maxAttempts: meta.a,
    dequeues: failures + requeues + (meta.c ?? 0) + (state === 'working' || state === 'completed' ? 1 : 0),
    requeues,
    createdAt: meta.t,
  };
  if (meta.o) info.failuresBeforeRedrive = meta.o;
  if (meta.rt) info.retries = meta.rt;
  if (meta.e !== undefined) info.lastError = meta.e;
  if (meta.eh) info.errors = meta.eh.map(([error, at, attempt]) => ({ error, at, attempt }));
  if (meta.g !== undefined) info.group = meta.g;
  if (meta.dd !== undefined) info.deduplicationId = meta.dd;
  if (meta.pa !== undefined) info.parent = { id: meta.pa, queue: parentQueueOf(meta.pq) };
  const at = Number(score);
  if (state === 'working' && score !== '') info.leaseDeadline = at;
  if (state === 'delayed') info.runAt = at;
  if (state === 'dead') info.diedAt = at;
  // The start of its last lease: the current one's (unknown for a lease of an older
  // version), a completed job's from its stored result, else the one its last settle kept.
  let processedOn = state === 'working' ? (started ? Number(started) : undefined) : meta.po;
  if (state === 'completed') {
    info.retainedUntil = at;
    processedOn = undefined;
    if (result) {
      const stored = JSON.parse(result) as { at: number; d?: number; r: Result | null };
      info.completedAt = stored.at;
      if (stored.d !== undefined) processedOn = stored.at - stored.d;
      if (stored.r !== null) info.result = stored.r;
    }
  }
  if (processedOn !== undefined) info.processedOn = processedOn;
  const finishedOn = info.completedAt ?? info.diedAt;
  if (finishedOn !== undefined) info.finishedOn = finishedOn;
  if (notes) {
    if (notes.progress) info.progress = JSON.parse(notes.progress) as JobProgress;
    info.logs = notes.logs;
  }
  return info;
}

/** What a job's handlers wrote (get-job.lua): its progress JSON ('' for none) and log lines. */
export interface JobNotes {
  progress: string;
  logs: string[];
}
