/**
 * relq/nest: the NestJS integration (docs/nest.md). Promised: QueueModule and QueueRegistry,
 * the decorators and WorkerHost, the injection tokens, the health indicator and service, the
 * options' types; and, so that a Nest app imports from this one path, the engine names its
 * providers and processors type against: Queue, NamedQueue, QueueProducer, Job, the errors a
 * producer or handler catches or throws, and the types of their options and answers (the same
 * objects as relq's). The rest of the engine is imported from relq.
 * test/packaging/surface.spec.ts holds the exact list.
 */
export { QueueModule } from './queues/queue.module.js';
export { QueueRegistry } from './queues/queue.registry.js';
export { InjectQueue } from './queues/inject-queue.decorator.js';
export { Processor } from './processors/processor.decorator.js';
export { Process } from './processors/process.decorator.js';
export { OnWorkerEvent } from './events/on-worker-event.decorator.js';
export { QueueEventsListener } from './events/queue-events-listener.decorator.js';
export { OnQueueEvent } from './events/on-queue-event.decorator.js';
export type { QueueListenerEvents, QueueListenerEventType } from './events/queue-listener-events.js';
export { Scheduled } from './schedulers/scheduled.decorator.js';
export { WorkerHost } from './processors/worker-host.js';
export { processorFor, type NamedProcessDecorator, type NamedProcessMethod, type TypedProcessorDecorators } from './processors/processor-for.js';
export { InjectNamedQueue } from './queues/inject-queue.decorator.js';
export { NamedQueue, type NamedBulkJob, type NamedJobOptions } from '../core/queue/named-queue.js';
export type { JobDataOf, JobMap, JobName, JobResultOf, JobSpec, NamedJob } from '../core/queue/job-names.js';
export type { QueueSchedulerOptions, SchedulerDeclaration } from './schedulers/scheduler-options.js';
export type {
  BatchProcessDecorator,
  BatchProcessMethod,
  BatchProcessOptionsArg,
  BatchProcessResult,
  ProcessDecorator,
  ProcessMethod,
} from './processors/process.decorator.js';
export { getNamedQueueToken, getQueueOptionsToken, getQueueToken, RELQ_MODULE_OPTIONS } from './relq.constants.js';
export { AlreadyRegisteredError, RelqConfigError } from './errors.js';
export { QueueHealthIndicator } from './health/queue-health.indicator.js';
export type { QueueHealthDetails, QueueHealthIndicatorResult } from './health/queue-health.indicator.js';
export { QueueHealthService } from './health/queue-health.service.js';
export type { QueueBoundUsage, QueueHealth, RedisHealth, RelqHealthReport } from './health/queue-health.service.js';
export type { ProcessorStatus } from './processors/processor-runner.js';
export type { HandlerStatus } from './processors/handler-router.js';
export type { SweeperStatus } from './sweeper/queue-sweeper.js';

// Options, by kind.
export type { FactoryFunction, FactoryInject } from './queues/async-options.js';
export type { QueueDefaults } from './queues/queue-defaults.js';
export type {
  QueueModuleAsyncOptions,
  QueueModuleOptions,
  QueueModuleOptionsFactory,
  ShutdownOptions,
  WorkersOptions,
} from './queues/root-options.js';
export type { QueueOptionsFactory, RegisterQueueAsyncOptions, RegisterQueueOptions } from './queues/queue-options.js';
export type { SweeperOptions } from './sweeper/sweeper-options.js';
export type { HealthOptions, HealthThresholds } from './health/health-options.js';
export type { ProcessorDefaults, ProcessorEventType, ProcessorOptions } from './processors/processor-options.js';
export type { BatchProcessOptions, ProcessOptions } from './processors/handler-options.js';

// The engine types a Nest app needs most, so that one import path suffices.
export { Queue } from '../core/queue/queue.js';
export { PartitionedQueue } from '../core/partitions/partitioned-queue.js';
export type { QueueProducer } from '../core/queue/queue-producer.js';
export {
  CancelledError,
  ClosedError,
  LeaseLostError,
  QueueClosedError,
  QueueDeletedError,
  QueueFullError,
  QueueInUseError,
  SandboxError,
  UnrecoverableError,
} from '../core/errors.js';
export type { HandlerFile, Job, SandboxOptions } from '../core/worker/worker.js';
export type { BatchOutcome } from '../core/worker/batch-worker.js';
export type { QueueState } from '../core/settings/queue-settings.js';
export type { JobOptions } from '../core/adds/types.js';
export type { QueueEvent } from '../core/events/types.js';
export type { LeasedJob } from '../core/leases/types.js';
export type { JobInfo, JobState, QueueCounts } from '../core/management/read-types.js';
export type { ExclusiveOptions } from '../core/roles/types.js';
export type { QueueStats } from '../core/settings/types.js';
