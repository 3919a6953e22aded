import { RelqError } from '../errors.js';

/**
 * A flow names a queue whose keys are in another Redis Cluster slot than those of the queue
 * `addFlow()` is called on: one script writes a whole flow, and a script touches one slot.
 * Queues whose names share a `{tag}` (`'{orders}-email'`, `'{orders}-sms'`) share one
 * (docs/flows.md). Nothing was written.
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
      `${field}: queue '${otherQueue}' is in another Redis Cluster slot than queue '${queue}': a flow's queues must share one: give their names one {tag}, like '{orders}-email' and '{orders}-sms' (docs/flows.md)`,
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
