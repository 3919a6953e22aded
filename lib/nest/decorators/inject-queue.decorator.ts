import { Inject } from '@nestjs/common';
import { getQueueToken } from '../relq.constants.js';

/**
 * Injects the `Queue` registered with `QueueModule.registerQueue({ name })`. Type the
 * parameter with its job data and result: `@InjectQueue('emails') queue: Queue<EmailJob, string>`.
 */
export function InjectQueue(name: string): PropertyDecorator & ParameterDecorator {
  return Inject(getQueueToken(name));
}
