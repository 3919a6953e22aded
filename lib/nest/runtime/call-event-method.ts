import type { Logger } from '@nestjs/common';
import * as msg from '../relq.messages.js';
import type { InstanceSource } from './processor-definition.js';

/**
 * @internal Calls an event method (`@OnWorkerEvent()`, `@OnQueueEvent()`) of a discovered
 * class on its instance for `context` (an instance per event when request-scoped). A throw or
 * rejection, of the method or of resolving its instance, is logged, never passed on: an event
 * method must not stop the loop or the subscription that delivers the event.
 */
export async function callEventMethod(
  owner: { className: string; instances: InstanceSource },
  decorator: '@OnWorkerEvent' | '@OnQueueEvent',
  methodName: string,
  context: object,
  args: unknown[],
  logger: Logger,
): Promise<void> {
  try {
    const instance = (await owner.instances.get(context)) as Record<string, unknown>;
    const method = instance[methodName] as (...a: unknown[]) => unknown;
    await method.apply(instance, args);
  } catch (err) {
    logger.error(msg.listenerThrew(decorator, owner.className, methodName, msg.textOf(err)), err instanceof Error ? err.stack : undefined);
  }
}
