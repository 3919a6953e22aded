import { ValidationError } from '../errors.js';
import { rateLimitSetting } from '../rate-limits/stored.js';
import type { RateLimit } from '../rate-limits/types.js';
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

/**
 * A partitioned queue's `limiter`, checked: as a queue's (`{ max: 0, durationMs: 0 }` removes
 * it), and `max` at least one per partition, since a partition's share of 0 would mean no limit.
 */
export function checkRateLimit(limiter: unknown, partitions: number, field = 'limiter'): void {
  if (rateLimitSetting(field, limiter) === '0') return;
  const { max } = limiter as RateLimit;
  if (max < partitions) {
    throw new ValidationError(`${field}.max`, `of a queue of ${partitions} partitions must be at least ${partitions}: each partition leases its share of it per window, at least 1; got ${max}`);
  }
}

/** Partition `i`'s rate limit: its share of `max` per window of the same length (a removal passes as it is). */
export function rateLimitShare(limiter: RateLimit, n: number, i: number): RateLimit {
  return limiter.max === 0 ? limiter : { max: shareOf(limiter.max, n, i), durationMs: limiter.durationMs };
}
