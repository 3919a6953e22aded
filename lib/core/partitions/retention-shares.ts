import { shareOf } from './shares.js';

type WithRetention = { keepCompleted?: unknown; keepDead?: unknown };

/**
 * Retention by count over partitions: a job's `keepCompleted.count` / `keepDead.count` is the
 * queue's, so partition `i` keeps its share of it (shares.ts), at least 1 (a count's least
 * value). The partitions keep at most max(count, n) finished jobs in all, each its newest
 * (docs/scale-out.md). Options not yet checked pass unchanged: the partition's queue checks
 * and refuses them as a queue does.
 */
export function withRetentionShares<O extends WithRetention>(opts: O, n: number, i: number): O {
  if (n === 1 || opts === null || typeof opts !== 'object') return opts;
  let completed: unknown;
  let dead: unknown;
  try {
    completed = shared(opts.keepCompleted, n, i);
    dead = shared(opts.keepDead, n, i);
  } catch {
    return opts; // a value that throws when read: the queue's checks refuse it with a ValidationError
  }
  if (completed === opts.keepCompleted && dead === opts.keepDead) return opts;
  return { ...opts, ...(completed === undefined ? {} : { keepCompleted: completed }), ...(dead === undefined ? {} : { keepDead: dead }) };
}

function shared(retention: unknown, n: number, i: number): unknown {
  if (retention === null || typeof retention !== 'object') return retention;
  const { count } = retention as { count?: unknown };
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) return retention;
  return { ...retention, count: Math.max(1, shareOf(count, n, i)) };
}
