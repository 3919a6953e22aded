import { MAX_TIMER_MS } from '../defaults.js';
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
 * 'defaults.processor.'). Each worker checks its own concurrency (batches have a lower limit).
 */
export function assertLoopOptions(o: LoopOptions, prefix = ''): void {
  if (o.leaseMs !== undefined) assertLeaseMs(`${prefix}leaseMs`, o.leaseMs);
  if (o.blockMs !== undefined) assertInt(`${prefix}blockMs`, o.blockMs, { min: 10, max: MAX_TIMER_MS });
  if (o.drainTimeoutMs !== undefined) assertInt(`${prefix}drainTimeoutMs`, o.drainTimeoutMs, { max: MAX_TIMER_MS });
  if (o.heartbeat !== undefined) assertBoolean(`${prefix}heartbeat`, o.heartbeat);
  if (o.autostart !== undefined) assertBoolean(`${prefix}autostart`, o.autostart);
}
