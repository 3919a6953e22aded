import type { QueueCounts, SweepResult } from '../management/read-types.js';

/**
 * A partitioned queue's counts from its partitions': jobs added up; paused when every
 * partition is; rate-limited as long as the longest window; schedulers present when some
 * partition has them.
 */
export function mergeCounts(parts: readonly QueueCounts[]): QueueCounts {
  const total: QueueCounts = {
    pending: 0,
    working: 0,
    delayed: 0,
    completed: 0,
    dead: 0,
    paused: parts.length > 0,
    ghosts: 0,
    rateLimitedMs: 0,
    rateLimitedGroups: 0,
    waitingChildren: 0,
  };
  for (const c of parts) {
    total.pending += c.pending;
    total.working += c.working;
    total.delayed += c.delayed;
    total.completed += c.completed;
    total.dead += c.dead;
    total.paused &&= c.paused;
    total.ghosts += c.ghosts;
    total.rateLimitedMs = Math.max(total.rateLimitedMs, c.rateLimitedMs);
    total.rateLimitedGroups += c.rateLimitedGroups;
    total.waitingChildren += c.waitingChildren;
    if (c.schedulers !== undefined) {
      total.schedulers = (total.schedulers ?? 0) + c.schedulers;
      total.schedulersOverdue = (total.schedulersOverdue ?? 0) + (c.schedulersOverdue ?? 0);
    }
  }
  return total;
}

/** A partitioned queue's sweep from its partitions': every count added up. */
export function mergeSweeps(parts: readonly SweepResult[]): SweepResult {
  const total: SweepResult = { stalled: 0, deadLettered: 0, promoted: 0, completedRemoved: 0, deadRemoved: 0, dedupForgotten: 0 };
  for (const r of parts) for (const k of Object.keys(total) as Array<keyof SweepResult>) total[k] += r[k];
  return total;
}
