import { DEFAULT_METRICS_RANGE_MINUTES, MAX_METRICS_MINUTES, MAX_RUN_AT } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { QueueContext } from '../queue/queue-context.js';
import { assertInt, assertOptions } from '../validate.js';
import { mergeInto, quantiles, type Histogram } from './buckets.js';
import { readMetricsScript, type StoredMetrics } from './scripts.js';
import type { MetricsHistory, MetricsPoint, MetricsRange } from './types.js';

const MINUTE_MS = 60_000;
/** Most minutes one read returns: a week's history and the current minute. */
const MAX_METRICS_POINTS = MAX_METRICS_MINUTES + 1;

/**
 * A queue's metrics history (history.lua writes it in the settle scripts): per-minute counts
 * and run-time quantiles, from one read-only call.
 */
export async function readMetrics(ctx: QueueContext, range: MetricsRange = {}): Promise<MetricsHistory> {
  return metricsOf([await readStoredMetrics(ctx, range)]);
}

/** The range checked, then the stored minutes of one queue (read-metrics.lua). */
export async function readStoredMetrics(ctx: QueueContext, range: MetricsRange): Promise<StoredMetrics> {
  assertOptions('getMetrics options', range, ['from', 'to']);
  const { from, to } = range;
  if (from !== undefined) assertInt('from', from, { max: MAX_RUN_AT });
  if (to !== undefined) assertInt('to', to, { max: MAX_RUN_AT });
  if (from !== undefined && to !== undefined) {
    if (to < from) throw new ValidationError('to', `must not be before from (${from}), got ${to}`);
    const minutes = Math.floor(to / MINUTE_MS) - Math.floor(from / MINUTE_MS) + 1;
    if (minutes > MAX_METRICS_POINTS) throw new ValidationError('from', `a range covers at most ${MAX_METRICS_POINTS} minutes, got ${minutes}`);
  }
  return ctx.run(readMetricsScript, { from, to, minutes: DEFAULT_METRICS_RANGE_MINUTES, maxMinutes: MAX_METRICS_POINTS });
}

/**
 * The history from the stored minutes of one or more queues (a partitioned queue's
 * partitions), merged minute by minute over the first one's range: counts added up, quantiles
 * from every run time of the minute.
 */
export function metricsOf(stored: readonly StoredMetrics[]): MetricsHistory {
  const [first] = stored;
  if (!first) throw new Error('metricsOf: no stored minutes');
  const count = first.minutes.length;
  const counts = Array.from({ length: count }, () => ({ completed: 0, failed: 0, dead: 0 }));
  const hists = Array.from({ length: count }, (): Histogram => new Map());
  for (const one of stored) {
    one.minutes.forEach((flat, k) => {
      const i = one.firstMinute + k - first.firstMinute;
      if (i < 0 || i >= count) return; // another master's clock: a minute outside the first's range
      const p = counts[i]!;
      const h = hists[i]!;
      for (let j = 0; j + 1 < flat.length; j += 2) {
        const field = flat[j]!;
        const n = Number(flat[j + 1]);
        if (field === 'c') p.completed += n;
        else if (field === 'f') p.failed += n;
        else if (field === 'd') p.dead += n;
        else h.set(Number(field), (h.get(Number(field)) ?? 0) + n);
      }
    });
  }
  const all: Histogram = new Map();
  const total = { completed: 0, failed: 0, dead: 0 };
  const points = counts.map((p, i): MetricsPoint => {
    total.completed += p.completed;
    total.failed += p.failed;
    total.dead += p.dead;
    mergeInto(all, hists[i]!);
    return { at: (first.firstMinute + i) * MINUTE_MS, ...p, runTime: quantiles(hists[i]!) };
  });
  return { keepMinutes: Math.max(...stored.map((s) => s.keepMinutes)), points, total: { ...total, runTime: quantiles(all) } };
}
