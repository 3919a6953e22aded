import { Inject } from '@nestjs/common';
import { getNamedQueueToken, getQueueToken } from '../relq.constants.js';

/**
 * Injects the `Queue` registered with `QueueModule.registerQueue({ name })`. Type the
 * parameter with its job data and result: `@InjectQueue('emails') queue: Queue<EmailJob, string>`.
 */
export function InjectQueue(name: string): PropertyDecorator & ParameterDecorator {
  return Inject(getQueueToken(name));
}

/**
 * Injects the queue registered under `name` as a `NamedQueue`, typed by a map of job name →
 * data (and result): `@InjectNamedQueue('payments') payments: NamedQueue<PaymentJobs>`, then
 * `payments.add('charge', data)` (BullMQ's argument order; a name outside the map does not compile).
 */
export function InjectNamedQueue(name: string): PropertyDecorator & ParameterDecorator {
  return Inject(getNamedQueueToken(name));
}
