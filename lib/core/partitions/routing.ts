import { assertJobId } from '../validate.js';
import type { PartitionLayout } from './layout.js';

/** A partition's backlog counts as crowded above this many pending jobs and twice the mean. */
const CROWDED_MIN = 100;
/** Backlogs are read again at most this often, and only after this many spread jobs per partition. */
const BACKLOG_EVERY_MS = 1_000;
const SPREADS_PER_READ = 8;
/** How long the spread leaves out a partition whose add failed (its master away): jobs that may go anywhere go elsewhere. */
const AWAY_MS = 2_000;

/**
 * Picks each job's partition (docs/scale-out.md "Routing adds"): the key of its `group`, else
 * its `partitionKey`, its `jobId` or its deduplication id, so that jobs that must meet (a
 * group's FIFO, an idempotency key, a deduplication id) meet in one partition; a job with none
 * is spread. The spread is this producer's own rotation, started at a random partition,
 * skipping a partition whose backlog is crowded (over twice the mean): random starts and one
 * stride keep the backlogs even without producers talking to each other. While a resize's
 * new partitions are held (docs/scale-out.md), the spread leaves them out: they lease nothing yet.
 */
export class Router {
  private layout: PartitionLayout;
  /** The partitions the spread uses: all, or the old ones while a resize holds the new. */
  private n: number;
  private next: number;
  private pending: readonly number[] = [];
  private readAt = -Infinity;
  private spreadSinceRead = 0;
  private reading = false;
  /** Until when each partition is left out of the spread after a failed add. */
  private readonly awayUntil: number[];

  constructor(
    layout: PartitionLayout,
    /** The pending jobs of each partition, for the spread's look at backlogs. */
    private readonly readBacklogs: () => Promise<number[]>,
  ) {
    this.layout = layout;
    this.n = layout.n;
    this.next = Math.floor(Math.random() * this.n);
    this.awayUntil = new Array<number>(layout.n).fill(0);
  }

  /** The queue's map changed (a resize): keys route by `layout`; while `hold`, the spread keeps to the partitions it had. */
  setLayout(layout: PartitionLayout, hold: boolean): void {
    this.layout = layout;
    this.n = hold && layout.sizes.length > 1 ? layout.sizes[layout.sizes.length - 2]! : layout.n;
    while (this.awayUntil.length < layout.n) this.awayUntil.push(0);
    this.next %= this.n;
    this.pending = [];
  }

  /**
   * An add on partition `i` failed: the spread leaves it out for a while, so that jobs with no
   * key go to the partitions that answer (the failed add is not sent elsewhere: it may have
   * been written before its reply was lost).
   */
  failed(i: number): void {
    this.awayUntil[i] = Date.now() + AWAY_MS;
  }

  /** The partition of a job with options `opts` (not checked yet: what is not a string routes nothing). */
  partitionOf(opts: unknown): number {
    if (this.layout.n === 1) return 0;
    const key = routingKey(opts);
    return key === undefined ? this.spread() : this.layout.partitionOfKey(key);
  }

  private spread(): number {
    this.spreadSinceRead += 1;
    this.maybeReadBacklogs();
    const crowded = this.crowdedAbove();
    const now = Date.now();
    for (let tries = 0; tries < this.n; tries += 1) {
      const i = this.next;
      this.next = (i + 1) % this.n;
      if (!((this.pending[i] ?? 0) > crowded) && !(this.awayUntil[i]! > now)) return i;
    }
    return this.next; // every one crowded or away: keep turning
  }

  private crowdedAbove(): number {
    if (this.pending.length === 0) return Infinity;
    const mean = this.pending.reduce((a, b) => a + b, 0) / this.pending.length;
    return Math.max(CROWDED_MIN, 2 * mean);
  }

  /**
   * Backlogs are read in the background (an add never waits for them), at most once a second
   * and only once this producer spread several jobs per partition since the last read: a
   * producer that adds now and then pays nothing, its rotation alone keeps it even.
   */
  private maybeReadBacklogs(): void {
    if (this.reading || this.spreadSinceRead < SPREADS_PER_READ * this.n) return;
    const now = Date.now();
    if (now - this.readAt < BACKLOG_EVERY_MS) return;
    this.reading = true;
    this.readAt = now;
    this.spreadSinceRead = 0;
    this.readBacklogs()
      .then((pending) => (this.pending = pending))
      .catch(() => undefined) // the rotation goes on with the last reading
      .finally(() => (this.reading = false));
  }
}

/**
 * The key that orders a job, if its options have one: its group, else its partitionKey. A
 * resize keeps such a key's order across its move (its bucket goes into the job's record,
 * partition-option.ts BUCKET); the other keys only make jobs meet.
 */
export function orderKey(opts: unknown): string | undefined {
  if (opts === null || typeof opts !== 'object') return undefined;
  const o = opts as Record<string, unknown>;
  for (const v of [o.group, o.partitionKey]) if (typeof v === 'string' && v !== '') return v;
  return undefined;
}

/** The key that routes a job, if its options have one (docs/scale-out.md, in this order). */
export function routingKey(opts: unknown): string | undefined {
  if (opts === null || typeof opts !== 'object') return undefined;
  const o = opts as Record<string, unknown>;
  for (const v of [o.group, o.partitionKey, o.jobId]) if (typeof v === 'string' && v !== '') return v;
  const dedup = o.deduplication as Record<string, unknown> | undefined;
  if (dedup !== null && typeof dedup === 'object' && typeof dedup.id === 'string' && dedup.id !== '') return dedup.id;
  return undefined;
}

/** The job options without `partitionKey`, checked (a queue's own checks do the rest). */
export function withoutPartitionKey<O extends { partitionKey?: string }>(opts: O | undefined, field: string): Omit<O, 'partitionKey'> | undefined {
  if (opts === null || typeof opts !== 'object' || !('partitionKey' in opts)) return opts;
  const { partitionKey, ...rest } = opts;
  if (partitionKey !== undefined) assertJobId(partitionKey, `${field}.partitionKey`);
  return rest;
}
