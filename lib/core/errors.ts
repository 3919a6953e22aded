/** Base class of every error relq throws; `code` is stable for programs to test. */
export class RelqError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input, detected before anything is written to Redis. `field` names the culprit. */
export class ValidationError extends RelqError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`, 'RELQ_INVALID_ARGUMENT');
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

/** Redis could not be reached or the connection broke; the message never holds a password. */
export class ConnectionError extends RelqError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'RELQ_CONNECTION', options);
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

/** Throw from a handler to dead-letter the job at once, without further attempts. */
export class UnrecoverableError extends RelqError {
  constructor(message: string) {
    super(message, 'RELQ_UNRECOVERABLE');
  }
}

/** A bounded queue is full: `tryAdd()` at once, `add()` once its `timeoutMs` ran out. */
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
