import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ProcessorExplorer } from '../discovery/processor.explorer.js';
import { RelqMetadataAccessor } from '../discovery/relq-metadata.accessor.js';
import { QueueHealthIndicator } from '../health/queue-health.indicator.js';
import { QueueHealthService } from '../health/queue-health.service.js';
import { resolveRootOptions, type QueueModuleOptions, type ResolvedRootOptions } from './root-options.js';
import { RELQ_MODULE_OPTIONS, RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import { QueueOrchestrator } from '../discovery/queue.orchestrator.js';
import { RuntimeQueues } from '../discovery/runtime-queues.js';
import { QueueRegistry } from './queue.registry.js';
import { RelqConnection } from './relq-connection.js';

// forRoot / forRootAsync (useFactory, useClass, useExisting with `createRelqOptions()`) come
// from Nest's ConfigurableModuleBuilder; the module is always global, so that every
// registerQueue finds the options, the connection and the registry.
const { ConfigurableModuleClass } = new ConfigurableModuleBuilder<QueueModuleOptions>({
  optionsInjectionToken: RELQ_MODULE_OPTIONS,
  moduleName: 'Relq',
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRelqOptions')
  .setExtras({}, (definition) => ({ ...definition, global: true }))
  .build();

/**
 * The global part of relq, imported once through `QueueModule.forRoot()` /
 * `forRootAsync()`: options, the shared connection, discovery, lease loops, sweepers,
 * health. A module of its own because QueueModule is also what each registerQueue
 * imports, which must not bring these providers again. @internal
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RELQ_RESOLVED_OPTIONS,
      useFactory: (raw: QueueModuleOptions) => resolveRootOptions(raw),
      inject: [RELQ_MODULE_OPTIONS],
    },
    {
      provide: RelqConnection,
      useFactory: (options: ResolvedRootOptions) => new RelqConnection(options.connection),
      inject: [RELQ_RESOLVED_OPTIONS],
    },
    QueueRegistry,
    QueueOrchestrator,
    RuntimeQueues,
    RelqMetadataAccessor,
    ProcessorExplorer,
    QueueHealthService,
    QueueHealthIndicator,
  ],
  exports: [RELQ_RESOLVED_OPTIONS, QueueRegistry, QueueHealthService, QueueHealthIndicator],
})
export class QueueCoreModule extends ConfigurableModuleClass {}
