import type { AnyQueue } from '../core/queue/any-queue.js';
import type { Subscription } from 'rxjs';
import type { QueueEvent } from '../core/events/types.js';
import type { MetricsHistory, RunTimeQuantiles } from '../core/metrics-history/types.js';

/** Jobs that ended an attempt in one interval, as seen by this dashboard process. */
export interface ThroughputPoint {
  /** Start of the interval (epoch ms, this process's clock). */
  t: number;
  completed: number;
  /** Failed attempts (handler errors and expired leases); a retried job counts once per attempt. */
  failed: number;
  /** Jobs dead-lettered (attempts ran out, or rejected). */
  dead: number;
  /** Run-time quantiles of the interval's attempts: from the metrics history only. */
  runTime?: RunTimeQuantiles;
}

/**
 * A queue's throughput: from its metrics history in Redis (`source: 'history'`, per minute,
 * across restarts and dashboards) when the queue keeps one, else what this dashboard process
 * saw since it started (`'process'`).
 */
export interface Throughput {
  source: 'history' | 'process';
  /** The history's first minute, or when this dashboard began listening (epoch ms): nothing before it is known. */
  since: number;
  intervalMs: number;
  /** Oldest first, one point per interval from `since` (at most the configured number), zeros included. */
  points: ThroughputPoint[];
  /** Counts read every interval (oldest first): the backlog over time. */
  samples: CountsSample[];
}

/** A queue's counts as read at `t` (`queue.counts()`). */
export interface CountsSample {
  t: number;
  pending: number;
  working: number;
  delayed: number;
  dead: number;
}

type Counter = 'completed' | 'failed' | 'dead';

/** Which published transition adds to which series. */
const COUNTERS: Partial<Record<QueueEvent['type'], Counter>> = {
  completed: 'completed',
  failed: 'failed',
  stalled: 'failed',
  dead: 'dead',
};

/**
 * A bounded ring of per-interval counts of one queue, fed by the transitions its scripts
 * publish (`queue.events()`). Scripts publish only while someone listens, so the queue pays
 * for this only while a dashboard runs; `stop()` unsubscribes. @internal
 */
export class ThroughputRecorder {
  private readonly points: ThroughputPoint[] = [];
  private readonly samples: CountsSample[] = [];
  private readonly sub: Subscription;
  private readonly timer: NodeJS.Timeout;
  readonly since = Date.now();

  constructor(
    private readonly queue: AnyQueue,
    private readonly intervalMs: number,
    private readonly capacity: number,
  ) {
    this.sub = queue.events().subscribe((e) => {
      const counter = COUNTERS[e.type];
      if (counter) this.current()[counter] += 1;
    });
    void this.sample();
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  /** The series from `since` (or the last `capacity` intervals) up to now, gaps filled with zeros. */
  snapshot(): Throughput {
    const now = this.bucket(Date.now());
    const first = Math.max(this.bucket(this.since), now - (this.capacity - 1) * this.intervalMs);
    const byStart = new Map(this.points.map((p) => [p.t, p]));
    const points: ThroughputPoint[] = [];
    for (let t = first; t <= now; t += this.intervalMs) points.push({ ...(byStart.get(t) ?? { t, completed: 0, failed: 0, dead: 0 }) });
    return { source: 'process', since: this.since, intervalMs: this.intervalMs, points, samples: this.samples.map((c) => ({ ...c })) };
  }

  /** The queue's metrics history as the chart's points, with this process's backlog samples. */
  fromHistory(history: MetricsHistory): Throughput {
    const points = history.points.map(({ at, completed, failed, dead, runTime }) => ({ t: at, completed, failed, dead, runTime }));
    return { source: 'history', since: points[0]?.t ?? Date.now(), intervalMs: 60_000, points, samples: this.samples.map((c) => ({ ...c })) };
  }

  /** The history's range for the chart: its intervals' span, in whole minutes, at least an hour. */
  get historyFrom(): number {
    return Date.now() - Math.max(3_600_000, (this.capacity - 1) * this.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sub.unsubscribe();
  }

  /** One counts read; a failed one (Redis away) leaves a gap in the samples. */
  private async sample(): Promise<void> {
    try {
      const { pending, working, delayed, dead } = await this.queue.counts();
      this.samples.push({ t: Date.now(), pending, working, delayed, dead });
      if (this.samples.length > this.capacity) this.samples.shift();
    } catch {
      // the next interval tries again; the page shows the gap
    }
  }

  private current(): ThroughputPoint {
    const t = this.bucket(Date.now());
    let last = this.points.at(-1);
    if (!last || last.t !== t) {
      last = { t, completed: 0, failed: 0, dead: 0 };
      this.points.push(last);
      if (this.points.length > this.capacity) this.points.shift();
    }
    return last;
  }

  private bucket(ms: number): number {
    return ms - (ms % this.intervalMs);
  }
}
