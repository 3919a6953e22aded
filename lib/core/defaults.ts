import type { JobPolicy } from './adds/types.js';

export const DEFAULT_PREFIX = 'relq';
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Longest time option (~70 years): every deadline stays exact in Lua's doubles. */
export const MAX_MS = 2 ** 41;
/** Largest `count` of `keepCompleted` / `keepDead`. */
export const MAX_KEEP_COUNT = 1_000_000_000;
/** Latest absolute due time (`runAt`, epoch ms). */
export const MAX_RUN_AT = 2 ** 51;
/** A lease's length (`leaseMs` of a job, a queue's job defaults, lease() and a lease loop) when none is given. */
export const DEFAULT_LEASE_MS = 30_000;
/** Shortest `leaseMs`: below it no heartbeat (at most one a 10 ms tick) could renew a lease in time. */
export const MIN_LEASE_MS = 10;

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

/** Jobs one lease loop runs at once (Worker `concurrency`; BatchWorker, a Nest handler: batches / jobs at once). */
export const DEFAULT_CONCURRENCY = 1;
/** Longest queue name (and group name) and job id. */
export const MAX_QUEUE_NAME_LENGTH = 128;
export const MAX_JOB_ID_LENGTH = 256;
/** Deepest nesting of a payload (data, result, progress). */
export const MAX_JSON_DEPTH = 1000;
/** Longest error text stored with a job; a longer one is cut. */
export const MAX_ERROR_TEXT = 4096;
/** Most jobs in one page of getJobs() / listDead(), or handled by one clean / retryDead / purgeDead call. */
export const MAX_MANAGED = 10_000;
/** A page of getJobs() / listDead() when none is asked for. */
export const DEFAULT_PAGE_SIZE = 100;
/** What cancel(id) makes of a leased job when no `outcome` is given. */
export const DEFAULT_CANCEL_OUTCOME = 'dead';
/** Jobs one clean() call removes at most when no limit is given. */
export const DEFAULT_CLEAN_LIMIT = 1000;
/** Most jobs in one flow: one script call carries them all. */
export const MAX_FLOW_JOBS = 10_000;
/** getFlow(): levels of children read below the job, and children read of each parent, when none is asked for. */
export const DEFAULT_FLOW_DEPTH = 10;
export const DEFAULT_FLOW_CHILDREN = 100;
/** getFlow() maxChildren and getDependencies() limit at most: one script call reads that many. */
export const MAX_FLOW_PAGE = 10_000;
/** Shortest `everyMs` of a scheduler. */
export const MIN_EVERY_MS = 100;
/** Longest scheduler id: room is left in a job id (MAX_JOB_ID_LENGTH) for 'repeat:' and ':<slot>'. */
export const MAX_SCHEDULER_ID_LENGTH = 200;
/** Schedulers moved on by one runSchedulers() call when no limit is given. */
export const DEFAULT_TICK_LIMIT = 100;
/** A SchedulerTicker's longest wait between ticks (`maxIntervalMs`). */
export const DEFAULT_TICKER_INTERVAL_MS = 1000;
/** How long getWorkers() lists a worker after it was last seen (`workerTtlMs`), and its shortest. */
export const DEFAULT_WORKER_TTL_MS = 60_000;
export const MIN_WORKER_TTL_MS = 1000;
/** A worker's calls carry its registration at most this often (a fifth of its ttl when shorter). */
export const WORKER_NOTE_EVERY_MS = 5000;
/** Longest `appName` of a worker. */
export const MAX_APP_NAME_LENGTH = 200;
/** Lifetime of an exclusive role's lease (`exclusive.ttlMs`), and its shortest. */
export const DEFAULT_ROLE_TTL_MS = 10_000;
export const MIN_ROLE_TTL_MS = 30;
/** How long a deleted queue's tombstone stops old clients (deleteQueue `tombstoneMs`). */
export const DEFAULT_TOMBSTONE_MS = 10_000;
/** waitForResult()'s wait when no `timeoutMs` is given. */
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

/** Minutes of metrics history a queue keeps (`metrics: true` or no `keepMinutes`), and the most it may keep. */
export const DEFAULT_METRICS_KEEP_MINUTES = 1440;
export const MAX_METRICS_MINUTES = 10_080;
/** Minutes `getMetrics()` reads when no `from` is given: an hour. */
export const DEFAULT_METRICS_RANGE_MINUTES = 60;

/** The command line's Redis when neither `--redis` nor $REDIS_URL names one. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** The command line's dead letters per atomic call (`--batch` of retry-dead / purge-dead). */
export const DEFAULT_DEAD_LETTER_BATCH = 1000;
/** A sandboxed handler's child (thread or process) idle this long is retired (`sandbox.idleMs`). */
export const DEFAULT_SANDBOX_IDLE_MS = 30_000;
/** After a sandboxed job's signal aborts, how long its child may take to end the job before it is killed (`sandbox.killAfterMs`). */
export const DEFAULT_SANDBOX_KILL_AFTER_MS = 1000;
