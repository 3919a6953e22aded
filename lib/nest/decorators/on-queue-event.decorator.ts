import type { ProcessorEventType } from '../options/processor-options.js';
import { ON_QUEUE_EVENT_METADATA } from '../relq.constants.js';

/** What `@OnQueueEvent()` records on a method. */
export interface OnQueueEventMetadata {
  types: ProcessorEventType[];
}

/**
 * Calls the method on outcomes of this processor's own jobs (this process only):
 * - `completed` `(job, result)`
 * - `failed` `(job, error, willRetry)` (every failed attempt, the last one too)
 * - `dead` `(job, error)` (dead-lettered: attempts ran out, or UnrecoverableError)
 * - `lost` `(job)` (the lease ran out before the outcome could be recorded)
 * - `error` `(error)` (the lease loop could not reach Redis; it retries by itself)
 *
 * A throw or rejection in the method is caught and logged.
 */
export function OnQueueEvent(type: ProcessorEventType): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as unknown;
    if (typeof method !== 'function') throw new TypeError('@OnQueueEvent() must decorate a method');
    const previous = Reflect.getOwnMetadata(ON_QUEUE_EVENT_METADATA, method) as OnQueueEventMetadata | undefined;
    const meta: OnQueueEventMetadata = { types: [...(previous?.types ?? []), type] };
    Reflect.defineMetadata(ON_QUEUE_EVENT_METADATA, meta, method);
  };
}
