import { RelqError } from '../errors.js';

/**
 * A flow names a queue other than the one `addFlow()` was called on. A flow's jobs live in one
 * queue, so that adding, completing and removing them stay single atomic scripts on one
 * Cluster slot (docs/flows.md). Nothing was written.
 */
export class CrossQueueFlowError extends RelqError {
  constructor(
    /** The queue addFlow() was called on. */
    readonly queue: string,
    /** The queue the job named. */
    readonly otherQueue: string,
    /** Where in the flow, e.g. 'flow.children[1].queue'. */
    readonly field: string,
  ) {
    super(
      `${field}: '${otherQueue}' is not queue '${queue}': a flow's jobs all live in the queue addFlow() is called on (docs/flows.md)`,
      'RELQ_CROSS_QUEUE_FLOW',
    );
  }
}

/**
 * A job of the flow other than its root has a `jobId` that exists (or finished within its
 * idempotency window): the flow would be half a duplicate, so nothing was written.
 */
export class FlowJobExistsError extends RelqError {
  constructor(
    readonly queue: string,
    readonly jobId: string,
  ) {
    super(`job ${jobId} of queue '${queue}' exists: a flow is added whole or not at all`, 'RELQ_FLOW_JOB_EXISTS');
  }
}
