/**
 * relq/nest: the NestJS integration (docs/nest.md). Promised: QueueModule and QueueRegistry,
 * the decorators and WorkerHost, the injection tokens, the health indicator and service, the
 * options' types; and, so that a Nest app imports from this one path, the engine names its
 * providers and processors type against: Queue, NamedQueue, QueueProducer, Job, the errors a
 * producer or handler catches or throws, and the types of their options and answers (the same
 * objects as relq's). The rest of the engine is imported from relq.
 * test/packaging/surface.spec.ts holds the exact list.
 */
export { QueueModule } from './queue.module.js';
export { QueueRegistry } from './runtime/queue.registry.js';
export { InjectQueue, OnQueueEvent, OnWorkerEvent, Process, Processor, QueueEventsListener } from './decorators/index.js';
export type { QueueListenerEvents, QueueListenerEventType } from './runtime/queue-listener-events.js';
export { Scheduled } from './decorators/scheduled.decorator.js';
export { WorkerHost } from './worker-host.js';
export { processorFor, type NamedProcessDecorator, type NamedProcessMethod, type TypedProcessorDecorators } from './decorators/processor-for.js';
export { InjectNamedQueue } from './decorators/inject-queue.decorator.js';
export { NamedQueue, type NamedBulkJob, type NamedJobOptions } from '../core/queue/named-queue.js';
export type { JobDataOf, JobMap, JobName, JobResultOf, JobSpec, NamedJob } from '../core/queue/job-names.js';
export type { QueueSchedulerOptions, SchedulerDeclaration } from './options/scheduler-options.js';
export type {
  BatchProcessDecorator,
  BatchProcessMethod,
  BatchProcessOptionsArg,
  BatchProcessResult,
  ProcessDecorator,
  ProcessMethod,
} from './decorators/index.js';
export { getNamedQueueToken, getQueueOptionsToken, getQueueToken, RELQ_MODULE_OPTIONS } from './relq.constants.js';
export { RelqConfigError } from './errors.js';
export { QueueHealthIndicator } from './health/queue-health.indicator.js';
export type { QueueHealthDetails, QueueHealthIndicatorResult } from './health/queue-health.indicator.js';
export { QueueHealthService } from './health/queue-health.service.js';
export type { QueueBoundUsage, QueueHealth, RedisHealth, RelqHealthReport } from './health/queue-health.service.js';
export type { ProcessorStatus } from './runtime/processor-runner.js';
export type { HandlerStatus } from './runtime/handler-router.js';
export type { SweeperStatus } from './runtime/queue-sweeper.js';

// Options, by kind.
export type { FactoryFunction, FactoryInject } from './options/async-options.js';
export type { QueueDefaults } from './options/queue-defaults.js';
export type {
  QueueModuleAsyncOptions,
  QueueModuleOptions,
  QueueModuleOptionsFactory,
  ShutdownOptions,
  WorkersOptions,
} from './options/root-options.js';
export type { QueueOptionsFactory, RegisterQueueAsyncOptions, RegisterQueueOptions } from './options/queue-options.js';
export type { SweeperOptions } from './options/sweeper-options.js';
export type { HealthOptions, HealthThresholds } from './options/health-options.js';
export type { ProcessorDefaults, ProcessorEventType, ProcessorOptions } from './options/processor-options.js';
export type { BatchProcessOptions, ProcessOptions } from './options/handler-options.js';

// The engine types a Nest app needs most, so that one import path suffices.
export { Queue } from '../core/queue/queue.js';
export type { QueueProducer } from '../core/queue/queue-producer.js';
export {
  ClosedError,
  LeaseLostError,
  QueueClosedError,
  QueueDeletedError,
  QueueFullError,
  QueueInUseError,
  UnrecoverableError,
} from '../core/errors.js';
export type { Job } from '../core/worker/worker.js';
export type { BatchOutcome } from '../core/worker/batch-worker.js';
export type { QueueState } from '../core/settings/queue-settings.js';
export type { JobOptions } from '../core/adds/types.js';
export type { QueueEvent } from '../core/events/types.js';
export type { LeasedJob } from '../core/leases/types.js';
export type { JobInfo, JobState, QueueCounts } from '../core/management/read-types.js';
export type { ExclusiveOptions } from '../core/roles/types.js';
export type { QueueStats } from '../core/settings/types.js';
