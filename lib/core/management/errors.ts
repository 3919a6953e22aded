import { RelqError } from '../errors.js';
import type { JobState } from './read-types.js';

/**
 * `retry(id)` of a job that has not finished (pending, working, delayed, waiting for its
 * children), that does not exist (or completed and its retention ended), or whose stored
 * record cannot be decoded: nothing was written. Only completed and dead jobs are retried.
 */
export class JobNotRetryableError extends RelqError {
  constructor(
    readonly queue: string,
    readonly jobId: string,
    /** Its state (completed or dead only when its record cannot be decoded); undefined when there is no such job. */
    readonly state: JobState | undefined,
    why: string,
  ) {
    super(`job ${jobId} of queue '${queue}' cannot be retried: ${why}`, 'RELQ_JOB_NOT_RETRYABLE');
  }
}
