export { Queue } from './core/queue/queue.js';
export { Worker } from './core/worker/worker.js';
export type { Job, Handler, WorkerOptions, WorkerEvent } from './core/worker/worker.js';
export * from './core/errors.js';
export type * from './core/types.js';
export { DEFAULT_POLICY, DEFAULT_PREFIX, DEFAULT_LEASE_MS, DEFAULT_MAX_PAYLOAD_BYTES } from './core/defaults.js';
export { BatchWorker } from './core/worker/batch-worker.js';
export type { BatchHandler, BatchOutcome, BatchWorkerOptions } from './core/worker/batch-worker.js';
export type { QueueState } from './core/queue/queue-settings.js';
