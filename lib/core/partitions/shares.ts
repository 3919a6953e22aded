import { ValidationError } from '../errors.js';
import { globalConcurrencySetting } from '../settings/concurrency.js';

/**
 * Partition `i`'s share of a queue-wide limit `total` over `n` partitions: floor(total / n),
 * plus one for the first total mod n. The shares add up to the total, so the fleet never holds
 * more than it; a partition at its share while another has room leaves up to n − 1 slots unused
 * (docs/scale-out.md "What is queue-wide").
 */
export function shareOf(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

/**
 * A partitioned queue's `globalConcurrency`, checked: as a queue's (0 removes it), and at least
 * one per partition, since a partition's share of 0 would mean no limit at all.
 */
export function checkGlobalConcurrency(limit: unknown, partitions: number, field = 'globalConcurrency'): number {
  globalConcurrencySetting(limit, field);
  const value = limit as number;
  if (value !== 0 && value < partitions) {
    throw new ValidationError(field, `of a queue of ${partitions} partitions must be 0 (none) or at least ${partitions}: each partition holds a share of it, at least 1; got ${value}`);
  }
  return value;
}
