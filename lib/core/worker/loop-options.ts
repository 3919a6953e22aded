import { MAX_APP_NAME_LENGTH, MAX_BATCH_CONCURRENCY, MAX_LEASE_COUNT, MAX_TIMER_MS, MIN_WORKER_TTL_MS } from '../defaults.js';
import { assertLeaseMs } from '../leases/lease-ms.js';
import { assertBoolean, assertInt, assertString } from '../validate.js';

/** The options every lease loop takes (Worker, BatchWorker, a Nest processor). */
export interface LoopOptions {
  leaseMs?: number;
  blockMs?: number;
  drainTimeoutMs?: number;
  heartbeat?: boolean;
  autostart?: boolean;
  /** The name `queue.getWorkers()` shows for this worker (e.g. the service it belongs to). */
  appName?: string;
  /** How long `queue.getWorkers()` lists this worker after it was last seen (1 s or more). Default 60 s. */
  workerTtlMs?: number;
}

/**
 * The one check of a lease loop's options; `prefix` names where they were given (e.g.
 * 'defaults.processor.'). The concurrency is checked apart (assertConcurrency): batches have a
 * lower limit.
 */
export function assertLoopOptions(o: LoopOptions, prefix = ''): void {
  if (o.leaseMs !== undefined) assertLeaseMs(`${prefix}leaseMs`, o.leaseMs);
  if (o.blockMs !== undefined) assertInt(`${prefix}blockMs`, o.blockMs, { min: 10, max: MAX_TIMER_MS });
  if (o.drainTimeoutMs !== undefined) assertInt(`${prefix}drainTimeoutMs`, o.drainTimeoutMs, { max: MAX_TIMER_MS });
  if (o.heartbeat !== undefined) assertBoolean(`${prefix}heartbeat`, o.heartbeat);
  if (o.autostart !== undefined) assertBoolean(`${prefix}autostart`, o.autostart);
  if (o.appName !== undefined) assertString(`${prefix}appName`, o.appName, MAX_APP_NAME_LENGTH);
  if (o.workerTtlMs !== undefined) assertInt(`${prefix}workerTtlMs`, o.workerTtlMs, { min: MIN_WORKER_TTL_MS, max: MAX_TIMER_MS });
}

/**
 * The one check of a concurrency: jobs at once (a Worker, a handler), or batches at once
 * (`batches`: a BatchWorker, a batch handler). At construction and when set on a running worker.
 */
export function assertConcurrency(field: string, value: unknown, batches = false): asserts value is number {
  assertInt(field, value, { min: 1, max: batches ? MAX_BATCH_CONCURRENCY : MAX_LEASE_COUNT });
}
