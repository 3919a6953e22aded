import type { Job } from '../../core/worker/job-view.js';

/**
 * The base class of a `@Processor()` whose one method `process(job)` takes every job of the
 * queue (BullMQ's shape, with a `switch (job.name)`): its `process` is the processor's
 * default handler, as if decorated with `@Process()`. `@Process('name')` methods may sit
 * beside it and take their names first. Type the jobs with `WorkerHost<NamedJob<Jobs>>` to
 * have `switch (job.name)` narrow `job.data`.
 */
export abstract class WorkerHost<J extends Job<unknown> = Job<unknown>> {
  /** Handles one job: its return value completes the job, a throw is a failed attempt. */
  abstract process(job: J): unknown;
}
