import type { JobState, QueueCounts, SweepResult } from '../management/read-types.js';
import type { SchedulerTickResult } from '../schedulers/types.js';
import type { QueueStats } from '../settings/types.js';
import type { QueueState } from '../settings/queue-settings.js';
import type { WorkerInfo } from '../workers/types.js';

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

/** A partition's count of the jobs in `state`. */
export function countOf(c: QueueCounts, state: JobState): number {
  return state === 'waiting-children' ? c.waitingChildren : c[state];
}

/**
 * The parts of the page `start`..`end` (inclusive) over slices of the given sizes laid end to
 * end: for each slice the page touches, its positions `from`..`to` inside it.
 */
export function pageAcross(sizes: readonly number[], start: number, end: number): Array<{ slice: number; from: number; to: number }> {
  const parts: Array<{ slice: number; from: number; to: number }> = [];
  let offset = 0;
  sizes.forEach((size, slice) => {
    const from = Math.max(start - offset, 0);
    const to = Math.min(end - offset, size - 1);
    if (from <= to) parts.push({ slice, from, to });
    offset += size;
  });
  return parts;
}

/** Each worker once (it registers in every partition it leases from), its latest registration. */
export function mergeWorkers(parts: readonly WorkerInfo[][]): WorkerInfo[] {
  const byId = new Map<string, WorkerInfo>();
  for (const w of parts.flat()) {
    const seen = byId.get(w.id);
    if (!seen || w.lastSeenAt > seen.lastSeenAt) byId.set(w.id, { ...w, startedAt: Math.min(w.startedAt, seen?.startedAt ?? w.startedAt) });
    else seen.startedAt = Math.min(seen.startedAt, w.startedAt);
  }
  return [...byId.values()].sort((a, b) => a.startedAt - b.startedAt);
}

/** Produced and consumed figures added up; enabled when every partition counts. */
export function mergeStats(parts: readonly QueueStats[]): QueueStats {
  const total: QueueStats = { enabled: parts.length > 0, produced: { messages: 0, bytes: 0 }, consumed: { messages: 0, bytes: 0 } };
  for (const s of parts) {
    total.enabled &&= s.enabled;
    for (const k of ['produced', 'consumed'] as const) {
      total[k].messages += s[k].messages;
      total[k].bytes += s[k].bytes;
    }
  }
  return total;
}

/** Scheduler ticks added up: the latest Redis time, the earliest next slot. */
export function mergeTicks(parts: readonly SchedulerTickResult[]): SchedulerTickResult {
  const due = parts.map((t) => t.nextDueAt).filter((t): t is number => t !== null);
  return {
    advanced: parts.reduce((n, t) => n + t.advanced, 0),
    added: parts.reduce((n, t) => n + t.added, 0),
    now: Math.max(0, ...parts.map((t) => t.now)),
    nextDueAt: due.length === 0 ? null : Math.min(...due),
  };
}

/**
 * A partitioned queue's state from its partitions': closed when some partition is (closeQueue
 * again closes the rest), producers waiting added up, group overrides from every partition;
 * the settings every partition is made with, as partition 0 holds them.
 */
export function mergeStates(parts: readonly QueueState[]): QueueState {
  const [first] = parts;
  if (!first) throw new Error('mergeStates: no partition');
  return {
    ...first,
    closed: parts.some((s) => s.closed),
    globalConcurrency: parts.reduce((n, s) => n + s.globalConcurrency, 0), // the shares added up
    limiter: first.limiter && { max: parts.reduce((n, s) => n + (s.limiter?.max ?? 0), 0), durationMs: first.limiter.durationMs },
    stats: parts.every((s) => s.stats),
    waitingProducers: parts.reduce((n, s) => n + s.waitingProducers, 0),
    groupOverrides: Object.assign({}, ...parts.map((s) => s.groupOverrides)) as QueueState['groupOverrides'],
    metricsKeepMinutes: Math.max(...parts.map((s) => s.metricsKeepMinutes)),
  };
}
