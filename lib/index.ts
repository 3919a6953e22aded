export { Queue } from './core/queue.js';
export { Worker } from './core/worker.js';
export type { Job, Handler, WorkerOptions, WorkerEvent } from './core/worker.js';
export * from './core/errors.js';
export type * from './core/types.js';
export { backoffDelay } from './core/backoff.js';
export { DEFAULT_POLICY, DEFAULT_PREFIX, DEFAULT_LEASE_MS, DEFAULT_MAX_PAYLOAD_BYTES } from './core/defaults.js';
export { queueKeys, QUEUE_KEYS } from './core/keys.js';
