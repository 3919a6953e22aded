import type { JobPolicyOptions } from '../adds/types.js';
import type { RateLimit } from '../rate-limits/types.js';
import type { GroupOverride } from '../settings/concurrency.js';
import type { ConnectionInput } from '../redis/types.js';
import type { ExclusiveOptions } from '../roles/types.js';
import type { MetricsOptions } from '../metrics-history/types.js';
import type { WarningHandler } from '../warnings.js';

export interface QueueOptions {
  connection?: ConnectionInput;
  /** Key prefix; keys are `{<prefix>:<queue>}:<kind>`. Default 'relq'. */
  prefix?: string;
  defaults?: JobPolicyOptions;
  /** Largest JSON payload or result accepted, in bytes. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** Log lines kept per job (`job.log`); older lines are dropped. Default 100. */
  maxLogLines?: number;
  /** Publish job transitions for events(), watch() and waitForResult(). Default true. */
  events?: boolean;
  /**
   * Bounded queue: at most this many unfinished jobs (pending + working + delayed). A full
   * queue makes `add()` wait and `tryAdd()` fail. Stored in Redis by this Queue's first call;
   * 0 removes the bound. Every producer of the queue should pass it (see docs).
   */
  bound?: number;
  /** Count produced and consumed messages and bytes (`stats()`). Stored in Redis like `bound`. */
  stats?: boolean;
  /**
   * Keep a metrics history in Redis (`getMetrics()`): per minute, the attempts completed,
   * failed and dead and their run-time quantiles, written by the settle calls workers make
   * anyway (a few commands per call, none per job), for `keepMinutes` (true: a day). Stored in
   * Redis like `bound`; false stops it (the minutes kept expire). A queue without it pays nothing.
   */
  metrics?: boolean | MetricsOptions;
  /** At most this many jobs of one group leased at once. Stored in Redis like `bound`; 0 removes it. */
  groupConcurrency?: number;
  /**
   * Rate limit of the queue, enforced by the lease script for every worker: at most `max`
   * leases per window of `durationMs` (the window opens with its first lease). Stored in
   * Redis like `bound`; `{ max: 0, durationMs: 0 }` removes it (docs/rate-limits.md).
   */
  limiter?: RateLimit;
  /** The same for each group of a grouped queue: a spent group waits, the others go on. */
  groupLimiter?: RateLimit;
  /**
   * At most this many jobs of the queue leased at once, all workers of all processes together,
   * enforced by the lease script. Stored in Redis like `bound`; 0 removes it. Change it at run
   * time with `setGlobalConcurrency()` (docs/concurrency.md).
   */
  globalConcurrency?: number;
  /**
   * Groups with limits of their own in place of `groupConcurrency` / `groupLimiter` (a premium
   * tenant's 10 beside everyone else's 2); `null` removes a group's. Stored in Redis like
   * `bound`, each written over that group's; change them at run time with `setGroupOverride()`.
   */
  groupOverrides?: Record<string, GroupOverride | null>;
  /** Exclusive producer and/or consumer role for this Queue object. */
  exclusive?: ExclusiveOptions;
  /**
   * Every add checks in Redis that the queue is not closed (closeQueue) and fails with
   * QueueClosedError: one more read per add call. Default true when bound, stats or an
   * exclusive producer is set (those adds read the queue's state anyway), false otherwise:
   * adds then skip the check while this producer's reading of the queue's state, at most a
   * second old, found it open (docs/bounded-fair-batch.md). False together with bound,
   * stats or an exclusive producer is refused.
   */
  checkClosed?: boolean;
  /**
   * What to do when Redis may evict keys (maxmemory-policy other than noeviction), which
   * loses jobs: 'warn' once per connection (default), 'error' (every call of the queue fails
   * with ServerConfigError), or 'off' (no check: e.g. a managed service that hides CONFIG).
   * Read once per connection on first use, where the server allows CONFIG GET.
   */
  evictionCheck?: EvictionCheck;
  /** Receives operator warnings (eviction policy, ghost ids). Default: Node process warnings. */
  onWarning?: WarningHandler;
  /**
   * Adds and settles wait until this many replicas have them (Redis WAIT); a call whose
   * write they did not confirm in time throws NotReplicatedError (docs/reliability.md).
   */
  durability?: DurabilityOptions;
}

/** Writes wait until this many replicas have them (WAIT), at most `timeoutMs`. */
export interface DurabilityOptions {
  /** Replicas that must acknowledge each add and settle (1 or more). */
  replicas: number;
  /** Longest wait for them; a call that could not reach them throws NotReplicatedError. */
  timeoutMs: number;
}

/** What a queue does when Redis may evict keys (maxmemory-policy is not noeviction): warn once, refuse, or say nothing. */
export type EvictionCheck = 'warn' | 'error' | 'off';
