import { MAX_MS, MIN_LEASE_MS } from '../defaults.js';
import { assertInt } from '../validate.js';

/**
 * The one check of a lease length, wherever it enters: a job's `leaseMs`, a queue's job
 * defaults, lease() and a lease loop's options (its default: DEFAULT_LEASE_MS, applied by each).
 */
export function assertLeaseMs(field: string, value: unknown): asserts value is number {
  assertInt(field, value, { min: MIN_LEASE_MS, max: MAX_MS });
}
