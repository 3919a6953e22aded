import type { Logger } from '@nestjs/common';
import * as msg from '../relq.messages.js';
import type { EventDecorator } from './event-method.js';
import type { InstanceSource } from '../processors/processor-definition.js';
import { withTimeout } from '../with-timeout.js';
import { stackOf } from '../../core/thrown.js';

/**
 * @internal The event methods (`@OnWorkerEvent()`, `@OnQueueEvent()`) of one discovered class:
 * calls them on its instance for an event (an instance per event when request-scoped), and
 * keeps the calls still running for the class's stop() to wait for, since they may use the
 * queues that close after it. A throw or rejection, of the method or of resolving its
 * instance, is logged, never passed on: an event method must not stop the loop or the
 * subscription that delivers the event.
 */
export class EventMethodCalls {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly owner: { className: string; instances: InstanceSource },
    private readonly decorator: EventDecorator,
    private readonly logger: Logger,
  ) {}

  /** Calls `methodName` for the event `context` with `args`; never rejects. */
  call(methodName: string, context: object, args: unknown[]): void {
    const call = this.run(methodName, context, args).finally(() => this.running.delete(call));
    this.running.add(call);
  }

  /** Waits up to `timeoutMs` for the calls still running; a warning counts those left running. */
  async finish(timeoutMs: number): Promise<void> {
    if (this.running.size === 0) return;
    try {
      await withTimeout(Promise.all(this.running), timeoutMs, `the ${this.decorator}() calls of ${this.owner.className}`);
    } catch {
      this.logger.warn(msg.eventCallsUnfinished(this.owner.className, this.decorator, this.running.size, timeoutMs));
    }
  }

  private async run(methodName: string, context: object, args: unknown[]): Promise<void> {
    try {
      const instance = (await this.owner.instances.get(context)) as Record<string, unknown>;
      const method = instance[methodName] as (...a: unknown[]) => unknown;
      await method.apply(instance, args);
    } catch (err) {
      this.logger.error(
        msg.listenerThrew(this.decorator, this.owner.className, methodName, msg.textOf(err)),
        stackOf(err),
      );
    }
  }
}
