import { TimeoutError } from '../errors.js';
import type { HeldLease } from './job-view.js';

const noTimer = (): void => undefined;

/**
 * Starts the clock of one attempt when its job has a `timeoutMs`: at the timeout the job's
 * signal aborts and `onTimeout` gets the TimeoutError the attempt fails with. A duration on
 * this process's own timer, so no clock is compared with another's. Returns what stops it.
 */
export function startAttemptTimer<Data>(held: HeldLease<Data>, onTimeout: (error: TimeoutError) => void): () => void {
  const ms = held.lease.job.policy.timeoutMs;
  if (ms === undefined) return noTimer;
  const timer = setTimeout(() => {
    const error = new TimeoutError(`job ${held.lease.job.id} timed out after ${ms} ms (timeoutMs)`);
    held.timedOut = error;
    held.abort(error);
    onTimeout(error);
  }, ms);
  return () => clearTimeout(timer);
}
