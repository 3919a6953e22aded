import type { ModuleDefaults } from './queue-defaults.js';

/**
 * The method by which a value that stands in for a queue's provider (a test's
 * `overrideProvider(getQueueToken(name)).useValue(fake)`) learns the defaults the module gives
 * that queue: forRoot's `defaults` under registerQueue's, as a real Queue would get them.
 * relq/testing's FakeQueue has it. @internal
 */
export const TAKE_MODULE_DEFAULTS: unique symbol = Symbol.for('relq.takeModuleDefaults');

export interface QueueStandIn {
  [TAKE_MODULE_DEFAULTS](defaults: ModuleDefaults): void;
}

export function isQueueStandIn(value: unknown): value is QueueStandIn {
  return typeof (value as Partial<QueueStandIn> | null | undefined)?.[TAKE_MODULE_DEFAULTS] === 'function';
}
