import type { Provider } from '@nestjs/common';
import { NamedQueue } from '../core/queue/named-queue.js';
import type { Queue } from '../core/queue/queue.js';
import { RelqConfigError } from './errors.js';
import { assertOneWay } from './options/async-options.js';
import { resolveQueueOptions, type RegisterQueueAsyncOptions, type RegisterQueueOptions } from './options/queue-options.js';
import type { ResolvedRootOptions } from './options/root-options.js';
import { getNamedQueueToken, getQueueOptionsToken, getQueueToken, RELQ_RESOLVED_OPTIONS } from './relq.constants.js';
import * as msg from './relq.messages.js';
import { QueueRegistry } from './runtime/queue.registry.js';

type QueueOwnOptions = Omit<RegisterQueueOptions, 'name'>;

/**
 * The provider of one queue's `Queue`: its options (given inline, or made by the provider
 * behind `optionsToken`) over the root's, registered in the QueueRegistry.
 */
export function createQueueProvider(name: string, inline: RegisterQueueOptions | undefined, optionsToken?: string): Provider {
  return {
    provide: getQueueToken(name),
    useFactory: (root: ResolvedRootOptions | undefined, registry: QueueRegistry | undefined, made?: QueueOwnOptions): Queue<unknown, unknown> => {
      // Optional so that a missing forRoot gets this message rather than Nest's "can't resolve dependencies"
      if (!root || !registry) throw new RelqConfigError(msg.forRootNeeded(name));
      if (made !== undefined && made !== null && typeof made === 'object' && 'name' in made && made.name !== name) {
        throw new RelqConfigError(msg.factoryGaveName(name, made.name));
      }
      return registry.addQueue(resolveQueueOptions(inline ?? { ...made, name }, root));
    },
    inject: [
      { token: RELQ_RESOLVED_OPTIONS, optional: true },
      { token: QueueRegistry, optional: true },
      ...(optionsToken ? [optionsToken] : []),
    ],
  };
}

/** The `NamedQueue` view of one queue's `Queue` (`@InjectNamedQueue`): the same object underneath. */
export function createNamedQueueProvider(name: string): Provider {
  return {
    provide: getNamedQueueToken(name),
    useFactory: (queue: Queue<unknown, unknown>) => new NamedQueue<Record<string, { data: unknown }>>(queue),
    inject: [getQueueToken(name)],
  };
}

/** The providers of the options of a `registerQueueAsync` queue. */
export function createAsyncQueueOptionsProviders(options: RegisterQueueAsyncOptions): Provider[] {
  assertOneWay(`registerQueueAsync('${options.name}')`, options);
  const token = getQueueOptionsToken(options.name);
  if (options.useFactory) {
    return [{ provide: token, useFactory: options.useFactory as (...args: unknown[]) => unknown, inject: options.inject ?? [] }];
  }
  const factoryClass = (options.useClass ?? options.useExisting)!;
  const providers: Provider[] = [
    {
      provide: token,
      useFactory: (factory: { createQueueOptions(name: string): unknown }) => factory.createQueueOptions(options.name),
      inject: [factoryClass],
    },
  ];
  if (options.useClass) providers.push({ provide: options.useClass, useClass: options.useClass });
  return providers;
}
