import { Injectable, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { EventMethodMetadata } from '../events/event-method.js';
import type { ProcessMetadata } from '../processors/process.decorator.js';
import type { ProcessorMetadata } from '../processors/processor.decorator.js';
import type { QueueEventsListenerMetadata } from '../events/queue-events-listener.decorator.js';
import type { ProcessorEventType } from '../processors/processor-options.js';
import {
  ON_QUEUE_EVENT_METADATA,
  ON_WORKER_EVENT_METADATA,
  PROCESS_METADATA,
  PROCESSOR_METADATA,
  QUEUE_EVENTS_LISTENER_METADATA,
} from '../relq.constants.js';
import type { QueueListenerEventType } from '../events/queue-listener-events.js';

/** Reads what `@Processor()`, `@Process()`, `@OnWorkerEvent()`, `@QueueEventsListener()` and `@OnQueueEvent()` recorded. @internal */
@Injectable()
export class RelqMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getProcessorMetadata(target: Type): ProcessorMetadata | undefined {
    return this.reflector.get<ProcessorMetadata | undefined>(PROCESSOR_METADATA, target);
  }

  getProcessMetadata(method: Function): ProcessMetadata | undefined {
    return this.reflector.get<ProcessMetadata | undefined>(PROCESS_METADATA, method);
  }

  /** The event types of every `@OnWorkerEvent()` on the method (none: an empty list). */
  getWorkerEventTypes(method: Function): ProcessorEventType[] {
    return this.eventTypes(ON_WORKER_EVENT_METADATA, method);
  }

  getQueueEventsListenerMetadata(target: Type): QueueEventsListenerMetadata | undefined {
    return this.reflector.get<QueueEventsListenerMetadata | undefined>(QUEUE_EVENTS_LISTENER_METADATA, target);
  }

  /** The event types of every `@OnQueueEvent()` on the method (none: an empty list). */
  getQueueEventTypes(method: Function): QueueListenerEventType[] {
    return this.eventTypes(ON_QUEUE_EVENT_METADATA, method);
  }

  private eventTypes<T extends string>(metadataKey: string, method: Function): T[] {
    return this.reflector.get<EventMethodMetadata<T> | undefined>(metadataKey, method)?.types ?? [];
  }
}
