/** A built-in backoff: the delay before each retry follows from these numbers. */
export interface Backoff {
  type: 'fixed' | 'exponential';
  /** Delay before the first retry; exponential doubles it per failed attempt. */
  delayMs: number;
  /** Upper bound of one delay (exponential). Default 1 hour. */
  maxDelayMs?: number;
  /** Fraction of the delay drawn at random, 0 to 1: 0.2 gives delay × [0.8, 1.2]. Default 0.2. */
  jitter?: number;
}

/**
 * A backoff strategy registered by name on the workers (`backoffStrategies`, docs/handlers.md):
 * after a failed attempt, the worker that ran it asks the strategy for the delay (or 'dead').
 * A worker without that strategy (it warns), and a `nack()` without `delayMs`, retry with
 * the built-in default backoff.
 */
export interface CustomBackoff {
  type: 'custom';
  /** The strategy's name in the workers' `backoffStrategies`. */
  strategy: string;
}

/**
 * How many finished jobs of a kind a queue keeps, and for how long (`keepCompleted`,
 * `keepDead`). Each field left out keeps the value of the queue's defaults (or the built-in one).
 */
export interface Retention {
  /**
   * Keep at most the newest `count` jobs of the queue in this state (1 or more): when a job
   * with a count completes (dies), the oldest beyond it leave, at most 10 per such job
   * (docs/bounded-fair-batch.md, "Retention of finished jobs").
   */
  count?: number;
  /** How long after it completed (died) a job is kept, in ms. */
  ageMs?: number;
}

/** Per-job settings; any not given come from the queue's `defaults`. */
export interface JobPolicy {
  /** Maximum deliveries that may fail (handler error or lease expiry) before the job is dead. */
  attempts: number;
  backoff: Backoff | CustomBackoff;
  /**
   * Lease length for this job, overriding the worker's: how long a worker may hold it without
   * a heartbeat before it is presumed lost. Not a bound on run time (a heartbeat renews it):
   * that is `timeoutMs`.
   */
  leaseMs?: number;
  /**
   * Longest run of one attempt: at the timeout the handler's `job.signal` aborts and the
   * attempt fails with a TimeoutError, retried by the job's policy. Default: no timeout.
   */
  timeoutMs?: number;
  /** How long a completed job and its result are kept. 0 deletes at once. Given as `keepCompletedMs` or `keepCompleted.ageMs`. */
  keepCompletedMs: number;
  /** `keepCompleted.count`: at most this many completed jobs are kept. Default: no count. */
  keepCompletedCount?: number;
  /** `keepDead.ageMs`: how long a dead job is kept. Default: until retried or purged. */
  keepDeadMs?: number;
  /** `keepDead.count`: at most this many dead jobs are kept. Default: no count. */
  keepDeadCount?: number;
  /** How long a finished job's custom jobId is still recognised as a duplicate. */
  dedupWindowMs: number;
}

/**
 * A job policy as given: any field may be left out, `backoff` may be a number (fixed ms, no
 * jitter), and retention is given as `keepCompleted` / `keepDead` (`keepCompletedMs` is
 * `keepCompleted.ageMs` by its older name: give one of the two).
 */
export interface JobPolicyOptions extends Partial<Omit<JobPolicy, 'backoff' | 'keepCompletedCount' | 'keepDeadMs' | 'keepDeadCount'>> {
  /**
   * `{ type, delayMs, maxDelayMs?, jitter? }`, a number (a fixed delay in ms without jitter),
   * or `{ type: 'custom', strategy }`: a strategy the workers register.
   */
  backoff?: Backoff | CustomBackoff | number;
  /** Completed jobs kept: at most `count` of the queue's, each for `ageMs` (default 1 hour, as `keepCompletedMs`). */
  keepCompleted?: Retention;
  /** Dead jobs kept: at most `count` of the queue's, each for `ageMs`. Default: all, until retried or purged. */
  keepDead?: Retention;
}

/**
 * How long a deduplication id is held by the job whose add took it (README "Deduplication"):
 * - `'untilEnded'`: until the job completes or dies (or is removed);
 * - `'throttle'`: for `ttlMs` from that add, whatever the job does;
 * - `'debounce'`: until the job ends, and while it waits (pending or delayed) each add that
 *   meets the id replaces its data and its due time (`delayMs` / `runAt` of that add): the last
 *   add of a burst wins. Once the job is leased it is no longer replaced: the next add makes a
 *   new job, which takes the id.
 */
export type DeduplicationMode = 'untilEnded' | 'throttle' | 'debounce';

/** `JobOptions.deduplication`. */
export interface DeduplicationOptions {
  /** The deduplication id, apart from the job id: 1–256 characters, no control characters. */
  id: string;
  /**
   * Whether and how long the job whose add took the id holds it. Default: `'throttle'` when
   * `ttlMs` is given, else `'untilEnded'`. An add that meets a held id follows the mode of the
   * add that took it.
   */
  mode?: DeduplicationMode;
  /** `'throttle'` only, and required there: how long the id is held, in ms (at least 1). */
  ttlMs?: number;
  /**
   * `'untilEnded'` and `'debounce'`: an add that meets the id while its job runs (leased) is
   * kept, the last such add in place of any before it, and added as soon as that job completes
   * or dies, taking the id in its turn: one more run, never two at once. Without it such an
   * add is ignored (`'untilEnded'`) or makes a new job at once (`'debounce'`).
   */
  keepLastIfActive?: boolean;
}

/** What became of an add whose deduplication id another job held: `AddResult.deduplicated`. */
export type DeduplicationOutcome =
  /** Nothing was written. */
  | 'ignored'
  /** Debounce: the waiting job that holds the id got this add's data and due time. */
  | 'replaced'
  /** keepLastIfActive: kept, and added once the running job that holds the id ends. */
  | 'deferred';

export interface JobOptions extends JobPolicyOptions {
  /** Idempotency key: adding an id that exists (or finished within dedupWindowMs) creates nothing. */
  jobId?: string;
  /**
   * Deduplication by an id of its own, apart from `jobId`: while a job holds the id (see
   * DeduplicationMode), adds that carry it create no job ('deduplicated' event,
   * `AddResult.deduplicated`). Not for flows and schedulers.
   */
  deduplication?: DeduplicationOptions;
  /** Job name, used to route jobs to named handlers. */
  name?: string;
  /** Run no earlier than this many ms from now (Redis clock). */
  delayMs?: number;
  /** Run no earlier than this time (epoch ms or Date). */
  runAt?: number | Date;
  /**
   * Last in, first out: the job goes to the head of the pending jobs of its priority (or of
   * its group) instead of their tail. Not with `delayMs` / `runAt`: a delayed job becomes
   * pending in due order. Not stored with the job: a retry goes to the tail.
   */
  lifo?: boolean;
  /** Higher runs first; -1000 to 1000, default 0. FIFO within a priority. */
  priority?: number;
  /**
   * Fair scheduling: leasing rotates over the groups that have pending work, FIFO within a
   * group (a group's jobs cannot also have a priority). Named like a queue (no braces, no
   * control characters, at most 128 characters).
   */
  group?: string;
  /**
   * Most log lines kept for this job (`job.log`), 1 to 100 000: the oldest go first.
   * Default: the queue's `maxLogLines`. Stored with the job only when given.
   */
  keepLogs?: number;
  /**
   * Bounded queues: how long `add()` waits for room before it fails with QueueFullError.
   * Default: wait until there is room (or the queue is closed, deleted, or this Queue is
   * closed). Not stored with the job. Only `add()` takes it here: `addBulk(jobs, { waitMs })`
   * takes it for the whole call, and `tryAdd` / `tryAddBulk` never wait (a ValidationError).
   */
  waitMs?: number;
}

export interface AddResult {
  /** The job's id; for a deduplicated add, the id of the job that holds its deduplication id. */
  id: string;
  /** false when jobId already existed (nothing was written), or the add was deduplicated. */
  created: boolean;
  /** Present when another job held the add's deduplication id: what became of the add. */
  deduplicated?: DeduplicationOutcome;
}

export interface BulkJob<Data> {
  data: Data;
  opts?: JobOptions;
}
