import type { QueueCounts } from '../management/read-types.js';

/**
 * The schedulers' part of counts(): counts.lua returns them last, so they are read from the
 * end of its reply. Left out when the queue has no scheduler.
 */
export function schedulerCounts(r: readonly number[]): Pick<QueueCounts, 'schedulers' | 'schedulersOverdue'> {
  const schedulers = r[r.length - 2] ?? 0;
  return schedulers > 0 ? { schedulers, schedulersOverdue: r[r.length - 1] ?? 0 } : {};
}
