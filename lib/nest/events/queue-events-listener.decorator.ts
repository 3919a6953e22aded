import { SetMetadata } from '@nestjs/common';
import { QUEUE_EVENTS_LISTENER_METADATA } from '../relq.constants.js';

/** What `@QueueEventsListener()` records on a class. */
export interface QueueEventsListenerMetadata {
  queueName: string;
}

/**
 * Marks a provider class whose `@OnQueueEvent()` methods hear the events of a queue from
 * every process (published by the scripts, `queue.events()`): subscribed on bootstrap, again
 * by itself after a Redis outage, closed on shutdown. List the class in a module's
 * `providers`; the queue must be registered there.
 */
export function QueueEventsListener(queueName: string): ClassDecorator {
  return (target) => {
    const meta: QueueEventsListenerMetadata = { queueName };
    SetMetadata(QUEUE_EVENTS_LISTENER_METADATA, meta)(target);
  };
}
