import type { FlowChildren } from '../flows/types.js';
import type { JobParent } from '../leases/types.js';

/** 'waiting-children': a parent of a flow waiting until its children completed (docs/flows.md). */
export type JobState = 'pending' | 'working' | 'delayed' | 'completed' | 'dead' | 'waiting-children';

// What the reads of a queue answer: getJob / getJobs (JobInfo), counts(), sweep(), listDead().

export interface JobInfo<Data, Result> {
  id: string;
  name: string;
  state: JobState;
  data: Data;
  priority: number;
  /** Failed attempts so far (handler errors and expired leases), over the job's whole life. */
  failures: number;
  /**
   * Of `failures`, those before the last `retry()` of the job or redrive of its dead letter
   * (`retryDead`), which gave it a fresh budget: it has used `failures - failuresBeforeRedrive`
   * of `maxAttempts` since. Absent until then (and while no failure came before it).
   */
  failuresBeforeRedrive?: number;
  /** Times `retry()` or `retryDead()` moved it back to pending. Absent until then. */
  retries?: number;
  maxAttempts: number;
  /** Times the job was leased (also before a retry). */
  dequeues: number;
  /** Times it was put back without a failure (requeue, shutdown). */
  requeues: number;
  createdAt: number;
  /** working: lease deadline. */
  leaseDeadline?: number;
  /** delayed: when it becomes pending. */
  runAt?: number;
  completedAt?: number;
  /** completed: when the job and its result expire. */
  retainedUntil?: number;
  diedAt?: number;
  /**
   * When its current attempt (working) or its last one began: the start of its last lease,
   * Redis time (BullMQ's processedOn). Absent until it was leased, after `retry()` or a
   * redrive (a fresh start), and after a lease given back by a rate limit (not an attempt).
   */
  processedOn?: number;
  /** When it completed or died: `completedAt ?? diedAt` (BullMQ's finishedOn). */
  finishedOn?: number;
  result?: Result;
  lastError?: string;
  /**
   * Its failures, oldest first, the last 10: each failed attempt's error (a handler's throw,
   * 'lease expired'), a rejection, with when (Redis time) and the attempt it ended.
   */
  errors?: JobError[];
  group?: string;
  /** The deduplication id its add carried (JobOptions.deduplication), whether or not it holds it now. */
  deduplicationId?: string;
  /** The last progress its handler reported (`job.updateProgress`), kept across attempts. */
  progress?: JobProgress;
  /** getJob(): its handlers' log lines (`job.log`), oldest first, the last `maxLogLines`. */
  logs?: string[];
  /** A flow's child: its parent's id and queue (BullMQ's `job.parent`). */
  parent?: JobParent;
  /** getJob() of a flow's parent: its children's results so far, and how many it waits for. */
  children?: FlowChildren;
}

/** One failure in a job's history (`JobInfo.errors`). */
export interface JobError {
  error: string;
  /** When it was recorded, Redis time (ms). */
  at: number;
  /** The attempt it ended (counted from the last retry or redrive of a dead letter). */
  attempt: number;
}

/** What a handler reports as its progress: a number (e.g. a percentage) or a JSON object or array. */
export type JobProgress = number | { [key: string]: unknown } | unknown[];

export interface QueueCounts {
  pending: number;
  working: number;
  delayed: number;
  completed: number;
  dead: number;
  paused: boolean;
  /**
   * Queued ids found without their job record and dropped by leases since the queue began:
   * a sign of eviction or of keys deleted outside relq (should stay 0).
   */
  ghosts: number;
  /** How long the queue's rate-limit window stays spent, in ms (0 when it is open). */
  rateLimitedMs: number;
  /** Groups waiting for their rate-limit window to end. */
  rateLimitedGroups: number;
  /** Parents of flows waiting for their children (docs/flows.md). */
  waitingChildren: number;
  /** Job schedulers of the queue; present when it has any (docs/schedulers.md). */
  schedulers?: number;
  /** Schedulers whose next slot passed over 5 s ago without a tick moving them on; present with `schedulers`. */
  schedulersOverdue?: number;
}

export interface SweepResult {
  /** Expired leases returned to pending (or dead-lettered). */
  stalled: number;
  /** Of those, dead-lettered because attempts ran out. */
  deadLettered: number;
  /** Delayed jobs that became pending. */
  promoted: number;
  /** Completed jobs whose retention ended. */
  completedRemoved: number;
  /** Dead jobs whose retention (`keepDead.ageMs`) ended. */
  deadRemoved: number;
  /** Custom job ids whose idempotency window ended. */
  dedupForgotten: number;
}

export interface DeadLetter<Data> {
  id: string;
  name: string;
  data: Data;
  failures: number;
  lastError?: string;
  diedAt: number;
}
