import type { JobPolicy } from './adds/types.js';

export const DEFAULT_PREFIX = 'relq';
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
export const DEFAULT_LEASE_MS = 30_000;

/** Built-in job policy; a record stores only what differs from it. */
export const DEFAULT_POLICY: Readonly<JobPolicy> = Object.freeze({
  attempts: 3,
  backoff: Object.freeze({ type: 'exponential' as const, delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 }),
  keepCompletedMs: 3_600_000,
  dedupWindowMs: 86_400_000,
});

/** A lease loop's wait for work when nothing is pending (Worker / BatchWorker `blockMs`). */
export const DEFAULT_BLOCK_MS = 5000;
/** How long running handlers may finish on close before their jobs are given back (`drainTimeoutMs`). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
/** A batch's wait for more jobs once it has one (BatchWorker `waitMs`). */
export const DEFAULT_BATCH_WAIT_MS = 0;
/** Log lines kept per job (`maxLogLines`): the oldest go first. */
export const DEFAULT_MAX_LOG_LINES = 100;
/** Largest accepted `maxLogLines`. */
export const MAX_LOG_LINES = 100_000;
/** Largest accepted `maxPayloadBytes`. */
export const MAX_PAYLOAD_LIMIT = 512 * 1024 * 1024;
/** Range of a sweep's `limit`. */
export const MAX_SWEEP_LIMIT = 100_000;

export const MAX_PRIORITY = 1000;
export const MAX_LEASE_COUNT = 1000;
/** Bound of each kind of work done by one sweep call. */
export const DEFAULT_SWEEP_LIMIT = 1000;
/** Most batches one BatchWorker runs at once. */
export const MAX_BATCH_CONCURRENCY = 64;
/** Longest delay a Node timer takes (setTimeout fires at once beyond it): the ceiling of every wait option. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
