/**
 * relq: the engine, framework-free. Promised: Queue and NamedQueue (produce, lease, settle,
 * read, manage, schedule, flows, events), Worker and BatchWorker, SchedulerTicker, listQueues,
 * the function library's status and load, every error class, and the types of their options,
 * results and events; PartitionedQueue (one queue over many Cluster masters, docs/scale-out.md).
 * Not promised: the queue's Redis keys and connection, the built-in
 * defaults as constants (the README's option tables give their values), anything under core/
 * not re-exported here. test/packaging/surface.spec.ts holds the exact list.
 */
export { Queue } from './core/queue/queue.js';
export { NamedQueue, type NamedBulkJob, type NamedJobOptions } from './core/queue/named-queue.js';
export type { JobDataOf, JobMap, JobName, JobResultOf, JobSpec, NamedJob } from './core/queue/job-names.js';
export type { QueueProducer } from './core/queue/queue-producer.js';
export { listQueues, type QueueListing } from './core/registry/registry.js';
export { functionLibraryStatus, loadFunctionLibrary, type FunctionLibraryLoad, type FunctionLibraryState, type FunctionLibraryStatus } from './core/redis/functions.js';
export { Worker } from './core/worker/worker.js';
export type { ActivityEvent, BackoffStrategies, BackoffStrategy, Job, Handler, HandlerFile, OutcomeEvent, SandboxOptions, WorkerOptions, WorkerEvent } from './core/worker/worker.js';
export * from './core/errors.js';
export { CrossQueueFlowError, FlowJobExistsError } from './core/flows/errors.js';
export { JobNotRetryableError } from './core/management/errors.js';
export { PartitionedQueue } from './core/partitions/partitioned-queue.js';
export { PartitionsMismatchError } from './core/partitions/errors.js';
export { ResizeRefusedError } from './core/partitions/resize.js';
// The public types, each from the feature that owns it.
export type * from './core/adds/types.js';
export type * from './core/leases/types.js';
export type * from './core/queue/types.js';
export type * from './core/redis/types.js';
export type * from './core/rate-limits/types.js';
export type * from './core/roles/types.js';
export type * from './core/settings/types.js';
export type * from './core/metrics-history/types.js';
export type * from './core/events/types.js';
export type * from './core/management/types.js';
export type * from './core/partitions/types.js';
export type * from './core/management/read-types.js';
export type * from './core/flows/types.js';
export type { RelqWarning, WarningHandler } from './core/warnings.js';
export type * from './core/schedulers/types.js';
export type * from './core/workers/types.js';
export { SchedulerTicker } from './core/schedulers/ticker.js';
export { BatchWorker } from './core/worker/batch-worker.js';
export type { BatchHandler, BatchOutcome, BatchWorkerOptions } from './core/worker/batch-worker.js';
export type { PauseOptions } from './core/worker/lease-worker.js';
export type { QueueState } from './core/settings/queue-settings.js';
export type { GroupOverride } from './core/settings/concurrency.js';
