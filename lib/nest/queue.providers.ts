import type { Provider } from '@nestjs/common';
import type { Queue } from '../core/queue/queue.js';
import { RelqConfigError } from './errors.js';
import type { RegisterQueueAsyncOptions, RegisterQueueOptions } from './interfaces/module-options.interface.js';
import { resolveQueueOptions, type ResolvedRootOptions } from './options.js';
import { QueueStore } from './runtime/queue.store.js';
import { RelqConnection } from './runtime/relq-connection.js';
import { getQueueOptionsToken, getQueueToken, RELQ_RESOLVED_OPTIONS } from './relq.constants.js';

/** The provider of one queue's `Queue`, built from its options and the root module's. @internal */
export function createQueueProvider(name: string, optionsToken: string | undefined, inline?: RegisterQueueOptions): Provider {
  return {
    provide: getQueueToken(name),
    useFactory: (
      root: ResolvedRootOptions | undefined,
      connection: RelqConnection | undefined,
      store: QueueStore | undefined,
      fromFactory: Omit<RegisterQueueOptions, 'name'> | undefined,
    ): Queue<unknown, unknown> => {
      if (!root || !connection || !store) {
        throw new RelqConfigError(
          `QueueModule.registerQueue('${name}') needs QueueModule.forRoot() or QueueModule.forRootAsync() in the imports of the root module`,
        );
      }
      const raw: RegisterQueueOptions = inline ?? { ...(fromFactory ?? {}), name };
      if (fromFactory !== undefined && fromFactory !== null && typeof fromFactory === 'object' && 'name' in fromFactory) {
        const given = (fromFactory as { name?: unknown }).name;
        if (given !== name) {
          throw new RelqConfigError(`registerQueueAsync('${name}'): the factory returned name '${String(given)}'; leave name out`);
        }
      }
      return store.register(resolveQueueOptions(raw, root), connection);
    },
    inject: [
      { token: RELQ_RESOLVED_OPTIONS, optional: true },
      { token: RelqConnection, optional: true },
      { token: QueueStore, optional: true },
      ...(optionsToken ? [optionsToken] : []),
    ],
  };
}

/** The provider of the options of a `registerQueueAsync` queue. @internal */
export function createAsyncQueueOptionsProviders(options: RegisterQueueAsyncOptions): Provider[] {
  const token = getQueueOptionsToken(options.name);
  const ways = [options.useFactory, options.useClass, options.useExisting].filter((w) => w !== undefined).length;
  if (ways !== 1) {
    throw new RelqConfigError(
      `registerQueueAsync('${options.name}'): give exactly one of useFactory, useClass or useExisting (got ${ways})`,
    );
  }
  if (options.useFactory) {
    return [
      {
        provide: token,
        useFactory: options.useFactory as (...args: unknown[]) => unknown,
        inject: options.inject ?? [],
      },
    ];
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
