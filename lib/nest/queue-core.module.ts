import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { QueueHealthIndicator } from './health/queue-health.indicator.js';
import { QueueHealthService } from './health/queue-health.service.js';
import type { QueueModuleOptions } from './interfaces/module-options.interface.js';
import { resolveRootOptions, type ResolvedRootOptions } from './options.js';
import { ProcessorExplorer } from './discovery/processor.explorer.js';
import { QueueOrchestrator } from './runtime/queue.orchestrator.js';
import { ConfigurableQueueCoreModule, MODULE_OPTIONS_TOKEN } from './queue.module-definition.js';
import { QueueRegistry } from './runtime/queue.registry.js';
import { QueueStore } from './runtime/queue.store.js';
import { RelqConnection } from './runtime/relq-connection.js';
import { RELQ_RESOLVED_OPTIONS } from './relq.constants.js';

/**
 * The global part of relq, imported once through `QueueModule.forRoot()` /
 * `forRootAsync()`: options, the shared connection, discovery, lease loops, sweepers,
 * health. @internal
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RELQ_RESOLVED_OPTIONS,
      useFactory: (raw: QueueModuleOptions) => resolveRootOptions(raw),
      inject: [MODULE_OPTIONS_TOKEN],
    },
    {
      provide: RelqConnection,
      useFactory: (options: ResolvedRootOptions) => new RelqConnection(options.connection),
      inject: [RELQ_RESOLVED_OPTIONS],
    },
    QueueStore,
    QueueOrchestrator,
    ProcessorExplorer,
    QueueRegistry,
    QueueHealthService,
    QueueHealthIndicator,
  ],
  exports: [RELQ_RESOLVED_OPTIONS, RelqConnection, QueueStore, QueueRegistry, QueueHealthService, QueueHealthIndicator],
})
export class QueueCoreModule extends ConfigurableQueueCoreModule {}
