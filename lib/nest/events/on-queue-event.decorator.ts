import type { QueueListenerEventType } from './queue-listener-events.js';
import { ON_QUEUE_EVENT_METADATA } from '../relq.constants.js';
import { eventMethodDecorator } from './event-method.js';

/**
 * In a `@QueueEventsListener()` class: calls the method on an event of the queue, from any
 * process, with BullMQ's names and arguments `(args, event)`: `args` as BullMQ's QueueEvents
 * gives them (`{ jobId, returnvalue }` for 'completed', `{ jobId, failedReason }` for
 * 'failed', ...; see QueueListenerEvents), `event` relq's own event. Events published while
 * the subscription is down (a Redis outage) are missed; nothing is replayed.
 */
export function OnQueueEvent(type: QueueListenerEventType): MethodDecorator {
  return eventMethodDecorator('@OnQueueEvent()', ON_QUEUE_EVENT_METADATA, type);
}
