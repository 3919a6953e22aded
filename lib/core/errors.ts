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
