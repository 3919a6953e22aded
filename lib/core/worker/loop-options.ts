import { MAX_BATCH_CONCURRENCY, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../defaults.js';
import { assertLeaseMs } from '../leases/lease-ms.js';
import { assertBoolean, assertInt } from '../validate.js';

/** The options every lease loop takes (Worker, BatchWorker, a Nest processor). */
export interface LoopOptions {
  leaseMs?: number;
  blockMs?: number;
  drainTimeoutMs?: number;
  heartbeat?: boolean;
  autostart?: boolean;
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
}

/**
 * The one check of a concurrency: jobs at once (a Worker, a handler), or batches at once
 * (`batches`: a BatchWorker, a batch handler). At construction and when set on a running worker.
 */
export function assertConcurrency(field: string, value: unknown, batches = false): asserts value is number {
  assertInt(field, value, { min: 1, max: batches ? MAX_BATCH_CONCURRENCY : MAX_LEASE_COUNT });
}
