import type { Provider } from '@nestjs/common';
import { NamedQueue } from '../../core/queue/named-queue.js';
import type { AppQueue } from './app-queue.js';
import { RelqConfigError } from '../errors.js';
import { assertOneWay } from './async-options.js';
import { resolveQueueOptions, type RegisterQueueAsyncOptions, type RegisterQueueOptions, type ResolvedQueueOptions } from './queue-options.js';
import type { ResolvedRootOptions } from './root-options.js';
import { getNamedQueueToken, getQueueConfigToken, getQueueOptionsToken, getQueueStandInToken, getQueueToken, RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import { isQueueStandIn, TAKE_MODULE_DEFAULTS } from './queue-stand-in.js';
import { QueueRegistry } from './queue.registry.js';

type QueueOwnOptions = Omit<RegisterQueueOptions, 'name'>;

/**
 * The providers of one queue: its options (given inline, or made by the provider behind
 * `optionsToken`) over the root's; its `Queue`, registered in the QueueRegistry; and the
 * hand-over of those options' defaults to a stand-in when a test overrides the queue's
 * provider (which then never runs its factory).
 */
export function createQueueProviders(name: string, inline: RegisterQueueOptions | undefined, optionsToken?: string): Provider[] {
  const config = getQueueConfigToken(name);
  return [
    {
      provide: config,
      useFactory: (root: ResolvedRootOptions | undefined, made?: QueueOwnOptions): ResolvedQueueOptions => {
        // Optional so that a missing forRoot gets this message rather than Nest's "can't resolve dependencies"
        if (!root) throw new RelqConfigError(msg.forRootNeeded(name));
        if (made !== undefined && made !== null && typeof made === 'object' && 'name' in made && made.name !== name) {
          throw new RelqConfigError(msg.factoryGaveName(name, made.name));
        }
        return resolveQueueOptions(inline ?? { ...made, name }, root);
      },
      inject: [{ token: RELQ_RESOLVED_OPTIONS, optional: true }, ...(optionsToken ? [optionsToken] : [])],
    },
    {
      provide: getQueueToken(name),
      useFactory: (options: ResolvedQueueOptions, registry: QueueRegistry | undefined): AppQueue => {
        if (!registry) throw new RelqConfigError(msg.forRootNeeded(name));
        return registry.declareQueue(options);
      },
      inject: [config, { token: QueueRegistry, optional: true }],
    },
    {
      provide: getQueueStandInToken(name),
      useFactory: (options: ResolvedQueueOptions, queue: unknown): null => {
        if (isQueueStandIn(queue)) queue[TAKE_MODULE_DEFAULTS]({ job: options.engine.defaults, processor: options.processorDefaults });
        return null;
      },
      inject: [config, getQueueToken(name)],
    },
  ];
}

/** The `NamedQueue` view of one queue's `Queue` (`@InjectNamedQueue`): the same object underneath. */
export function createNamedQueueProvider(name: string): Provider {
  return {
    provide: getNamedQueueToken(name),
    useFactory: (queue: AppQueue) => new NamedQueue<Record<string, { data: unknown }>>(queue),
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
