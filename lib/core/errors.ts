/** Base class of every error relq throws; `code` is stable for programs to test. */
export class RelqError extends Error {
  /**
   * True when the same call may succeed if tried again later: Redis was unreachable,
   * restarting (LOADING), failing over (CLUSTERDOWN, MOVED storms, READONLY) or out of
   * memory. False for a request that will never succeed as it is (bad input, a missing
   * permission, a wrong password). A retried call may find its first try applied.
   */
  readonly retryable: boolean;

  constructor(message: string, readonly code: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options?.retryable ?? false;
  }
}

/** Bad input, detected before anything is written to Redis. `field` names the culprit. */
export class ValidationError extends RelqError {
  constructor(
    readonly field: string,
    /** What is wrong with it (the message without the field's name). */
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`, 'RELQ_INVALID_ARGUMENT');
  }
}

/** A payload larger than the queue's `maxPayloadBytes`. */
export class PayloadTooLargeError extends ValidationError {
  constructor(
    field: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(field, `is ${bytes} bytes of JSON, over the limit of ${limit} bytes (maxPayloadBytes)`);
  }
}

/**
 * Redis could not be reached, the connection broke, or the server is not serving yet
 * (restarting, failing over). `cause` holds the underlying failure (e.g. a TLS error) with
 * secrets removed; the message names it too and never holds a password.
 */
export class ConnectionError extends RelqError {
  constructor(message: string, options?: { cause?: unknown; retryable?: boolean; code?: string }) {
    super(message, options?.code ?? 'RELQ_CONNECTION', { cause: options?.cause, retryable: options?.retryable ?? true });
  }
}

/** The server refused the credentials (wrong password, unknown or disabled ACL user). Not retryable. */
export class AuthenticationError extends ConnectionError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, retryable: false, code: 'RELQ_AUTH' });
  }
}

/**
 * The connected ACL user may not run a command or touch a key relq needs (NOPERM): the
 * message names which. docs/reliability.md gives the ACL a relq user needs.
 */
export class PermissionError extends RelqError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'RELQ_NOPERM', options);
  }
}

/** The operation was called on a queue or worker that has been closed. */
export class ClosedError extends RelqError {
  constructor(what: string) {
    super(`${what} is closed`, 'RELQ_CLOSED');
  }
}

/** `waitForResult` or a similar wait ran out of time. */
export class TimeoutError extends RelqError {
  constructor(message: string) {
    super(message, 'RELQ_TIMEOUT');
  }
}

/** The awaited job was dead-lettered (or removed) instead of completing. */
export class JobFailedError extends RelqError {
  constructor(
    readonly jobId: string,
    readonly reason: string,
  ) {
    super(`job ${jobId} did not complete: ${reason}`, 'RELQ_JOB_FAILED');
  }
}

/**
 * A change by id of a job a worker holds a lease on, refused with nothing written: `remove(id)`
 * (`{ force: true }` removes it), `updateData(id, data)` (its handler changes it with
 * `job.updateData()`).
 */
export class JobLeasedError extends RelqError {
  constructor(
    readonly queue: string,
    readonly jobId: string,
    /** What would change it: the refused call's remedy. */
    remedy = 'remove(id, { force: true }) removes it and ends the lease',
  ) {
    super(`job ${jobId} of queue '${queue}' is leased: ${remedy}`, 'RELQ_JOB_LEASED');
  }
}

/**
 * Why a handler's `job.signal` aborts when its lease ends before the handler does: the lease
 * was lost (it ran out and was swept, or the job was removed by force) or given back at the
 * worker's shutdown. The handler's outcome no longer counts.
 */
export class LeaseLostError extends RelqError {
  constructor(
    readonly jobId: string,
    message = `lease of job ${jobId} was lost`,
  ) {
    super(message, 'RELQ_LEASE_LOST');
  }
}

/**
 * `queue.cancel(id)` ended the job's lease while its handler ran: why the handler's
 * `job.signal` aborts (its outcome no longer counts), and the error the job failed with
 * (dead-lettered, or retried as a failed attempt). `reason` is the cancel's, when it gave one
 * (a worker that learnt of the cancel from its heartbeat, not from the cancel's notice, has none).
 */
export class CancelledError extends RelqError {
  constructor(
    readonly jobId: string,
    readonly reason?: string,
  ) {
    super(reason ? `job ${jobId} was cancelled: ${reason}` : `job ${jobId} was cancelled`, 'RELQ_CANCELLED');
  }
}

/** Throw from a handler to dead-letter the job at once, without further attempts. */
export class UnrecoverableError extends RelqError {
  constructor(message: string) {
    super(message, 'RELQ_UNRECOVERABLE');
  }
}

/**
 * Throw from a handler that met an upstream rate limit (e.g. an HTTP 429), or call
 * `job.rateLimit(delayMs)`: the job goes back to the head of the queue without a failed
 * attempt, and its group (a grouped job) or its queue leases nothing for `delayMs`
 * (docs/rate-limits.md). `scope: 'queue'` holds back the whole queue for a grouped job too.
 */
export class RateLimitError extends RelqError {
  readonly scope: 'auto' | 'queue';

  constructor(
    readonly delayMs: number,
    opts: { scope?: 'auto' | 'queue'; message?: string } = {},
  ) {
    super(opts.message ?? `rate limited for ${delayMs} ms`, 'RELQ_RATE_LIMITED');
    this.scope = opts.scope ?? 'auto';
  }
}

/**
 * Stands in for a value a handler threw (or returned as a failure) that throws when read: a
 * revoked Proxy, an Error whose `message` getter throws. The attempt fails with this error.
 */
export class UnreadableValueError extends RelqError {
  constructor(message: string) {
    super(message, 'RELQ_UNREADABLE_VALUE');
  }
}

/** A bounded queue is full: `tryAdd()` at once, `add()` once its `waitMs` ran out. */
export class QueueFullError extends RelqError {
  constructor(
    readonly queue: string,
    readonly bound: number,
    message = `queue '${queue}' is full (bound ${bound})`,
  ) {
    super(message, 'RELQ_QUEUE_FULL');
  }
}

/** The queue was closed with `closeQueue()`: it takes no more jobs. */
export class QueueClosedError extends RelqError {
  constructor(readonly queue: string) {
    super(`queue '${queue}' is closed for new jobs (closeQueue); reopenQueue() opens it again`, 'RELQ_QUEUE_CLOSED');
  }
}

/** The queue was deleted with `deleteQueue()` while this call used or waited on it. */
export class QueueDeletedError extends RelqError {
  constructor(readonly queue: string) {
    super(`queue '${queue}' was deleted (deleteQueue)`, 'RELQ_QUEUE_DELETED');
  }
}

/** Who holds an exclusive role: the process that set it. */
export interface RoleHolder {
  host: string;
  pid: number;
  instance: string;
}

/** Another process holds the queue's exclusive producer or consumer role. */
export class QueueInUseError extends RelqError {
  constructor(
    readonly queue: string,
    readonly role: 'producer' | 'consumer',
    readonly holder: RoleHolder | undefined,
  ) {
    const who = holder ? `${holder.host} pid ${holder.pid} (instance ${holder.instance})` : 'another process';
    super(`queue '${queue}' already has an exclusive ${role}: ${who}`, 'RELQ_QUEUE_IN_USE');
  }
}

/**
 * A Redis server setting makes relq unsafe (e.g. a maxmemory-policy that evicts keys, with
 * `evictionCheck: 'error'`). Every call of the queue fails with it until the server is fixed.
 */
export class ServerConfigError extends RelqError {
  constructor(
    readonly setting: string,
    readonly value: string,
    message: string,
  ) {
    super(message, 'RELQ_SERVER_CONFIG');
  }
}

/**
 * A write (add or settle) was applied on the master but fewer replicas than
 * `durability.replicas` confirmed it within `durability.timeoutMs`: it may be lost if the
 * master fails now. `result` is what the call returned (e.g. the AddResults); the write is
 * not undone, so do not simply repeat it (an add without a jobId would add a second job).
 */
export class NotReplicatedError<R = unknown> extends RelqError {
  constructor(
    readonly op: string,
    readonly replicas: number,
    readonly required: number,
    readonly result: R,
  ) {
    super(
      `relq ${op}: applied on the master, but only ${replicas} of ${required} replica(s) confirmed it in time (durability); it is lost if the master fails before replicating`,
      'RELQ_NOT_REPLICATED',
      { retryable: false },
    );
  }
}

/**
 * The child (a worker thread or process) of a sandboxed handler ended while it ran a job: it
 * exited, threw outside the handler, ran out of memory, or its handler file could not be
 * loaded. The attempt fails with it (retried by the job's policy) and the child is replaced.
 * `cause` holds what the child threw, when it said.
 */
export class SandboxError extends RelqError {
  constructor(
    readonly jobId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, 'RELQ_SANDBOX', options);
  }
}
