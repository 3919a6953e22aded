import type { ProcessorEventType } from '../processors/processor-options.js';
import { ON_WORKER_EVENT_METADATA } from '../relq.constants.js';
import { eventMethodDecorator } from './event-method.js';

/**
 * Calls the method on events of this processor's own worker (this process only):
 * - `active` `(job)` (a handler starts the job)
 * - `progress` `(job, progress)` (the handler's `job.updateProgress()` was stored)
 * - `completed` `(job, result)`
 * - `failed` `(job, error, willRetry)` (every failed attempt, the last one too)
 * - `dead` `(job, error)` (dead-lettered: attempts ran out, or UnrecoverableError)
 * - `lost` `(job)` (the lease ran out before the outcome could be recorded)
 * - `cancelled` `(job, error)` (`queue.cancel(id)` ended the job's lease while it ran: its
 *   `job.signal` aborted with `error`, a CancelledError; the handler's outcome is dropped)
 * - `stalled` `(jobId)` (this process's sweeper of the queue returned the job's expired lease:
 *   its worker, anywhere, died or stopped heartbeating; counted as a failed attempt)
 * - `rateLimited` `(job, delayMs)`
 * - `drained` `()` (a lease call found fewer jobs than the loop had room for: nothing left to
 *   lease for now; once, then again only after it leased more)
 * - `error` `(error)` (the lease loop could not reach Redis; it retries by itself)
 *
 * `active` and `progress` cost nothing unless some method listens to them. A throw or
 * rejection in the method is caught and logged. Events of every process: `@QueueEventsListener`.
 */
export function OnWorkerEvent(type: ProcessorEventType): MethodDecorator {
  return eventMethodDecorator('@OnWorkerEvent()', ON_WORKER_EVENT_METADATA, type);
}
