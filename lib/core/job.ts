import type { Job as HandlerJob } from './worker/job-view.js';

/**
 * The job as a handler sees it (lib/core/worker/job-view.ts), as relq and relq/nest export it:
 * plain `Job` is a job whose data is `unknown`, e.g. for a handler that does not read it.
 */
export type Job<Data = unknown> = HandlerJob<Data>;
