import { Module, type DynamicModule } from '@nestjs/common';
import { RelqConfigError } from '../errors.js';
import { assertOneWay } from './async-options.js';
import type { RegisterQueueAsyncOptions, RegisterQueueOptions } from './queue-options.js';
import type { QueueModuleAsyncOptions, QueueModuleOptions } from './root-options.js';
import { QueueCoreModule } from './queue-core.module.js';
import { createAsyncQueueOptionsProviders, createNamedQueueProvider, createQueueProviders } from './queue.providers.js';
import { getNamedQueueToken, getQueueOptionsToken, getQueueToken } from '../relq.constants.js';
import * as msg from '../relq.messages.js';

/**
 * relq for Nest. Import `QueueModule.forRoot()` (or `forRootAsync()`) once in the root
 * module, and `QueueModule.registerQueue({ name })` in each feature module that
 * produces to or consumes a queue; then inject with `@InjectQueue(name)` and consume
 * with a `@Processor(name)` class.
 */
@Module({})
export class QueueModule {
  /** Global settings: connection, prefix, defaults, sweeper, shutdown, workers, health. */
  static forRoot(options: QueueModuleOptions = {}): DynamicModule {
    return QueueCoreModule.forRoot(options);
  }

  /** forRoot with options from a factory (e.g. ConfigService), a class or an existing provider. */
  static forRootAsync(options: QueueModuleAsyncOptions): DynamicModule {
    assertOneWay('QueueModule.forRootAsync()', options);
    return QueueCoreModule.forRootAsync(options as Parameters<typeof QueueCoreModule.forRootAsync>[0]);
  }

  /** Registers queues for this module: each is injectable with `@InjectQueue(name)` (or `@InjectNamedQueue(name)`) here. */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers = queues.flatMap((q) => {
      if (!q || typeof q.name !== 'string') throw new RelqConfigError(msg.queueNameNeeded('registerQueue'));
      return [...createQueueProviders(q.name, q), createNamedQueueProvider(q.name)];
    });
    return { module: QueueModule, providers, exports: providers };
  }

  /** Registers queues whose options come from a factory, a class or an existing provider. */
  static registerQueueAsync(...queues: RegisterQueueAsyncOptions[]): DynamicModule {
    const imports = queues.flatMap((q) => q.imports ?? []);
    const providers = queues.flatMap((q) => {
      if (!q || typeof q.name !== 'string') throw new RelqConfigError(msg.queueNameNeeded('registerQueueAsync'));
      return [
        ...createAsyncQueueOptionsProviders(q),
        ...createQueueProviders(q.name, undefined, getQueueOptionsToken(q.name)),
        createNamedQueueProvider(q.name),
      ];
    });
    const exports = queues.flatMap((q) => [getQueueToken(q.name), getNamedQueueToken(q.name)]);
    return { module: QueueModule, imports, providers, exports };
  }
}
