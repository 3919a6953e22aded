/** A queue's metrics history option (QueueOptions `metrics`). */
export interface MetricsOptions {
  /** Minutes kept before the current one (default 1440: a day; at most 10 080: a week). */
  keepMinutes?: number;
}

/** The range of `getMetrics()`: epoch ms, both ends included, by whole minutes (Redis time). */
export interface MetricsRange {
  /** Default: 59 minutes before `to` (an hour of points). */
  from?: number;
  /** Default: now. */
  to?: number;
}

/** Run-time quantiles (ms, from the lease start to the settle) of the attempts of a minute or range. */
export interface RunTimeQuantiles {
  /** Attempts timed: the completed, failed and dead ones a handler ended (an expired lease is counted, not timed). */
  count: number;
  /** null when `count` is 0. Within ±10 % of the true value (log-scale buckets, 4 per doubling). */
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** The attempts one minute saw end (completed + failed + dead: every attempt that ended, but requeues and delays). */
export interface MetricsPoint {
  /** Start of the minute (epoch ms, Redis time). */
  at: number;
  completed: number;
  /** Failed attempts that were retried (handler errors, expired leases, cancels with 'retry'). */
  failed: number;
  /** Jobs dead-lettered (attempts spent, rejected, cancelled). */
  dead: number;
  runTime: RunTimeQuantiles;
}

/** What `getMetrics()` answers. */
export interface MetricsHistory {
  /** The queue's `metrics.keepMinutes` as stored, 0 when it keeps no history (points then hold what is left, if anything). */
  keepMinutes: number;
  /** One point per minute of the range, oldest first, empty minutes included. */
  points: MetricsPoint[];
  /** The whole range: its counts summed, its quantiles from all its run times. */
  total: Omit<MetricsPoint, 'at'>;
}
