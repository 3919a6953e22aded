import type { Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { AppQueue } from '../queues/app-queue.js';
import type { QueueEvent } from '../../core/events/types.js';
import * as msg from '../relq.messages.js';
import { EventMethodCalls } from './event-method-calls.js';
import type { InstanceSource } from '../processors/processor-definition.js';
import { listenerArgument, type QueueListenerEventType } from './queue-listener-events.js';
import { withTimeout } from '../with-timeout.js';

/** A discovered `@QueueEventsListener()` class, validated: what the explorer hands the orchestrator. */
export interface QueueListenerDefinition {
  className: string;
  queueName: string;
  /** Its `@OnQueueEvent()` methods. */
  methods: Array<{ type: QueueListenerEventType; methodName: string }>;
  instances: InstanceSource;
}

/** Longest wait at startup for the subscription (it goes on trying in the background). */
const SUBSCRIBE_WAIT_MS = 2000;

/**
 * Runs one `@QueueEventsListener()` class: subscribes to its queue's events from every
 * process and calls its `@OnQueueEvent()` methods. The engine's stream subscribes again by
 * itself after an outage; stop() unsubscribes and waits for the calls still running.
 */
export class QueueListener {
  private subscription: Subscription | undefined;
  private readonly calls: EventMethodCalls;

  constructor(
    readonly def: QueueListenerDefinition,
    private readonly queue: AppQueue,
    private readonly logger: Logger,
  ) {
    this.calls = new EventMethodCalls(def, '@OnQueueEvent', logger);
  }

  /** Subscribes; resolves once the subscription is active, or after SUBSCRIBE_WAIT_MS with a warning. */
  async start(): Promise<void> {
    if (this.subscription) return;
    this.subscription = this.queue.events().subscribe((event) => this.onEvent(event));
    try {
      await withTimeout(this.queue.eventsReady(), SUBSCRIBE_WAIT_MS, 'the event subscription');
      this.logger.log(msg.queueListenerStarted(this.def.className, this.def.queueName, this.def.methods.map((m) => m.type)));
    } catch (err) {
      // The engine keeps trying and reports the outage as a warning of the queue (onWarning).
      this.logger.warn(msg.queueListenerWaiting(this.def.className, this.def.queueName, msg.textOf(err)));
    }
  }

  /**
   * Unsubscribes, then waits up to `timeoutMs` for the method calls still running: they may
   * use the queue, which is closed after this (a warning names those left running).
   */
  async stop(timeoutMs: number): Promise<void> {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    await this.calls.finish(timeoutMs);
  }

  private onEvent(event: QueueEvent): void {
    for (const { type, methodName } of this.def.methods) {
      const args = listenerArgument(type, event);
      if (args === undefined) continue;
      this.calls.call(methodName, event, [args, event]);
    }
  }
}
