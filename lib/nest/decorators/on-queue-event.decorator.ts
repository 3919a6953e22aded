import type { QueueListenerEventType } from '../runtime/queue-listener-events.js';
import { ON_QUEUE_EVENT_METADATA } from '../relq.constants.js';

/** What `@OnQueueEvent()` records on a method. */
export interface OnQueueEventMetadata {
  types: QueueListenerEventType[];
}

/**
 * In a `@QueueEventsListener()` class: calls the method on an event of the queue, from any
 * process, with BullMQ's names and arguments `(args, event)`: `args` as BullMQ's QueueEvents
 * gives them (`{ jobId, returnvalue }` for 'completed', `{ jobId, failedReason }` for
 * 'failed', ...; see QueueListenerEvents), `event` relq's own event. Events published while
 * the subscription is down (a Redis outage) are missed; nothing is replayed.
 */
export function OnQueueEvent(type: QueueListenerEventType): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as unknown;
    if (typeof method !== 'function') throw new TypeError('@OnQueueEvent() must decorate a method');
    const previous = Reflect.getOwnMetadata(ON_QUEUE_EVENT_METADATA, method) as OnQueueEventMetadata | undefined;
    const meta: OnQueueEventMetadata = { types: [...(previous?.types ?? []), type] };
    Reflect.defineMetadata(ON_QUEUE_EVENT_METADATA, meta, method);
  };
}
