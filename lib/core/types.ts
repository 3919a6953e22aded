import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { RelqWarning, WarningHandler } from './warnings.js';

/**
 * ioredis options, optionally with a `url` (redis://, rediss://) that gives host, port, user,
 * password and db: `{ url: 'rediss://…', tls: { ca, cert, key } }` combines a URL with TLS
 * material. A Sentinel set is `{ sentinels: [{ host, port }], name: '<master set>' }`; relq
 * turns ioredis's `failoverDetector` on unless you set it.
 */
export interface ConnectionOptions extends RedisOptions {
  url?: string;
}

/** A redis:// or rediss:// URL, connection options, or a client you own (relq never closes it). */
export type ConnectionInput = string | ConnectionOptions | Redis | Cluster;

/** 'waiting-children': a parent of a flow waiting until its children completed (docs/flows.md). */
export type JobState = 'pending' | 'working' | 'delayed' | 'completed' | 'dead' | 'waiting-children';

export interface Backoff {
  type: 'fixed' | 'exponential';
  /** Delay before the first retry; exponential doubles it per failed attempt. */
  delayMs: number;
  /** Upper bound of one delay (exponential). Default 1 hour. */
  maxDelayMs?: number;
  /** Fraction of the delay drawn at random, 0 to 1: 0.2 gives delay × [0.8, 1.2]. Default 0.2. */
  jitter?: number;
}

/** Per-job settings; any not given come from the queue's `defaults`. */
export interface JobPolicy {
  /** Maximum deliveries that may fail (handler error or lease expiry) before the job is dead. */
  attempts: number;
  backoff: Backoff;
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
  /** How long a completed job and its result are kept. 0 deletes at once. */
  keepCompletedMs: number;
  /** How long a finished job's custom jobId is still recognised as a duplicate. */
  dedupWindowMs: number;
}

/** A job policy as given: any field may be left out, and `backoff` may be a number (fixed ms, no jitter). */
export interface JobPolicyOptions extends Partial<Omit<JobPolicy, 'backoff'>> {
  /** `{ type, delayMs, maxDelayMs?, jitter? }`, or a number: a fixed delay in ms without jitter. */
  backoff?: Backoff | number;
}

export interface JobOptions extends JobPolicyOptions {
  /** Idempotency key: adding an id that exists (or finished within dedupWindowMs) creates nothing. */
  jobId?: string;
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
   * Bounded queues: how long `add()` waits for room before it fails with QueueFullError.
   * Default: wait until there is room (or the queue is closed, deleted, or this Queue is
   * closed). Not stored with the job. Only `add()` takes it here: `addBulk(jobs, { waitMs })`
   * takes it for the whole call, and `tryAdd` / `tryAddBulk` never wait (a ValidationError).
   */
  waitMs?: number;
}

/** At most `max` jobs leased per window of `durationMs` (docs/rate-limits.md). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

/** Who may use a queue at once (docs/bounded-fair-batch.md). */
export interface ExclusiveOptions {
  /** At most one process adds jobs; others get QueueInUseError (or wait, see waitMs). */
  producer?: boolean;
  /** At most one process leases jobs. */
  consumer?: boolean;
  /** How long to wait for a role that another process holds. Default 0: fail at once. */
  waitMs?: number;
  /** The role lease: a crashed holder's role is free after this long. Default 10 s. */
  ttlMs?: number;
}

/** Produced and consumed messages and bytes of data (JSON) of one queue. */
export interface QueueStats {
  /**
   * Whether the queue counts now (`stats: true` stored for it). False: the figures are what was
   * counted while it did (zeros if it never did), not the queue's traffic.
   */
  enabled: boolean;
  produced: { messages: number; bytes: number };
  /** Deliveries: a job leased twice (a retry) counts twice. */
  consumed: { messages: number; bytes: number };
}

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

export interface AddResult {
  id: string;
  /** false when jobId already existed: nothing was written. */
  created: boolean;
}

export interface BulkJob<Data> {
  data: Data;
  opts?: JobOptions;
}

/** What a lease holder knows of its job. */
export interface LeasedJob<Data> {
  readonly id: string;
  readonly name: string;
  readonly data: Data;
  /** 1 for the first delivery; failures so far + 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly requeues: number;
  readonly createdAt: number;
  readonly leasedAt: number;
  readonly lastError?: string;
  readonly policy: Readonly<JobPolicy>;
  /** The job's fairness group, if it has one. */
  readonly group?: string;
}

/** A fenced claim on one job: only this token can ack, nack, requeue, reject or touch it. */
export interface Lease<Data> {
  readonly job: LeasedJob<Data>;
  readonly token: string;
  /** Epoch ms (Redis clock) when the lease runs out unless touched. */
  deadline: number;
  /** The length the lease was granted for; touch() without extendMs extends by it. */
  readonly leaseMs: number;
}

/**
 * What settling and touching need of a lease: its job id and token. A lease kept elsewhere
 * (e.g. handed to another process) can be rebuilt from these two and settles exactly like the
 * original: retention and backoff are read from the stored job.
 */
export interface LeaseRef {
  readonly job: { readonly id: string };
  readonly token: string;
  /** Updated by touch(). */
  deadline?: number;
  /** touch() without extendMs extends by this; a rebuilt lease without it must give extendMs. */
  readonly leaseMs?: number;
}

export interface LeaseOptions {
  /** Most jobs to lease at once (1 to 1000). Default 1. */
  count?: number;
  /** Lease length for jobs without their own leaseMs. Default 30 s. */
  leaseMs?: number;
  /** Wait up to this long when nothing is pending. Default 0 (return at once). */
  blockMs?: number;
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

export type { RelqWarning, WarningHandler };

// Job transitions as published by the scripts: lib/core/event-types.ts.
export type * from './event-types.js';
// Options of getJobs, remove, clean, retryDead / purgeDead: lib/core/management-types.ts.
export type * from './management-types.js';
// Flows of parent and child jobs: lib/core/flow-types.ts.
export type * from './flow-types.js';
// What reads answer (getJob, getJobs, counts, sweep, listDead): lib/core/read-types.ts.
export type * from './read-types.js';
