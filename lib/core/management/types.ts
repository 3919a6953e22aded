/** Options of the job-management calls of a Queue (docs/bounded-fair-batch.md, "Job management"). */

/** Page order of `getJobs()`: 'asc' is lease order for pending jobs, time order for the others. */
export type JobOrder = 'asc' | 'desc';

/** One page of `getJobs(state, page)`: positions `start` to `end` (inclusive) in `order`. */
export interface JobPage {
  /** First position, 0-based. Default 0. */
  start?: number;
  /** Last position, inclusive: at most 10 000 jobs per page. Default `start + 99`. */
  end?: number;
  /** Default 'asc'. */
  order?: JobOrder;
}

export interface RemoveOptions {
  /**
   * Remove a leased job too: its lease ends at once, so its holder's ack, nack, requeue,
   * reject and touch answer false (a stale lease). Default false: a leased job is refused
   * with JobLeasedError.
   */
  force?: boolean;
}

export interface CancelOptions {
  /**
   * What becomes of a leased (running) job, whose lease ends at once: 'dead' (default)
   * dead-letters it; 'retry' fails its attempt, as a nack would: it counts against its attempts,
   * runs again after its backoff (the built-in one for a custom strategy), or is dead-lettered
   * when none remain. Either way it fails with a CancelledError. A job not leased is removed.
   */
  outcome?: 'dead' | 'retry';
  /** Why, in its CancelledError (the job's error, the handler's `signal.reason`) and its 'cancelled' event. */
  reason?: string;
}

/**
 * What `cancel(id)` did: 'removed' (it was not leased: pending, delayed, waiting for its
 * children), 'dead' or 'retried' (it was leased: where its ended attempt took it), false
 * (no such job, or it already completed or died: nothing written).
 */
export type CancelResult = 'removed' | 'dead' | 'retried' | false;

/** The states `clean()` removes jobs from: the finished ones (`drain()` empties the waiting ones). */
export type CleanState = 'completed' | 'dead';

export interface CleanOptions {
  /** Only jobs that completed or died at least this long ago (Redis clock). Default 0: any. */
  olderThanMs?: number;
  /** Most jobs removed by the call, 1 to 10 000. Default 1000. */
  limit?: number;
}

/** Dead letters chosen by a filter (`retryDead`, `purgeDead`), oldest first. */
export interface DeadLetterFilter {
  /** Most dead letters handled by the call, 1 to 10 000. */
  limit: number;
  /** Only jobs of this name (`add(data, { name })`; '' is the jobs added without one). */
  name?: string;
  /** Only jobs that died at least this long ago (Redis clock). */
  olderThanMs?: number;
}
