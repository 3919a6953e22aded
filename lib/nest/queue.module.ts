import { Module, type DynamicModule } from '@nestjs/common';
import { RelqConfigError } from './errors.js';
import type {
  QueueModuleAsyncOptions,
  QueueModuleOptions,
  RegisterQueueAsyncOptions,
  RegisterQueueOptions,
} from './interfaces/module-options.interface.js';
import { QueueCoreModule } from './queue-core.module.js';
import { createAsyncQueueOptionsProviders, createQueueProvider } from './queue.providers.js';
import { getQueueOptionsToken, getQueueToken } from './relq.constants.js';

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
    const ways = [options.useFactory, options.useClass, options.useExisting].filter((w) => w !== undefined).length;
    if (ways !== 1) {
      throw new RelqConfigError(`QueueModule.forRootAsync(): give exactly one of useFactory, useClass or useExisting (got ${ways})`);
    }
    return QueueCoreModule.forRootAsync(options as Parameters<typeof QueueCoreModule.forRootAsync>[0]);
  }

  /** Registers queues for this module: each is injectable with `@InjectQueue(name)` here. */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers = queues.map((q) => {
      if (!q || typeof q.name !== 'string') throw new RelqConfigError('registerQueue(): every queue needs a name');
      return createQueueProvider(q.name, undefined, q);
    });
    return { module: QueueModule, providers, exports: providers };
  }

  /** Registers queues whose options come from a factory, a class or an existing provider. */
  static registerQueueAsync(...queues: RegisterQueueAsyncOptions[]): DynamicModule {
    const imports = queues.flatMap((q) => q.imports ?? []);
    const providers = queues.flatMap((q) => {
      if (!q || typeof q.name !== 'string') throw new RelqConfigError('registerQueueAsync(): every queue needs a name');
      return [...createAsyncQueueOptionsProviders(q), createQueueProvider(q.name, getQueueOptionsToken(q.name))];
    });
    const exports = queues.map((q) => getQueueToken(q.name));
    return { module: QueueModule, imports, providers, exports };
  }
}
