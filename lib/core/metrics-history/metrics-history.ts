import { DEFAULT_METRICS_RANGE_MINUTES, MAX_METRICS_MINUTES, MAX_RUN_AT } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { QueueContext } from '../queue/queue-context.js';
import { assertInt, assertOptions } from '../validate.js';
import { mergeInto, quantiles, type Histogram } from './buckets.js';
import { readMetricsScript } from './scripts.js';
import type { MetricsHistory, MetricsPoint, MetricsRange } from './types.js';

const MINUTE_MS = 60_000;
/** Most minutes one read returns: a week's history and the current minute. */
const MAX_METRICS_POINTS = MAX_METRICS_MINUTES + 1;

/**
 * A queue's metrics history (history.lua writes it in the settle scripts): per-minute counts
 * and run-time quantiles, from one read-only call.
 */
export async function readMetrics(ctx: QueueContext, range: MetricsRange = {}): Promise<MetricsHistory> {
  assertOptions('getMetrics options', range, ['from', 'to']);
  const { from, to } = range;
  if (from !== undefined) assertInt('from', from, { max: MAX_RUN_AT });
  if (to !== undefined) assertInt('to', to, { max: MAX_RUN_AT });
  if (from !== undefined && to !== undefined) {
    if (to < from) throw new ValidationError('to', `must not be before from (${from}), got ${to}`);
    const minutes = Math.floor(to / MINUTE_MS) - Math.floor(from / MINUTE_MS) + 1;
    if (minutes > MAX_METRICS_POINTS) throw new ValidationError('from', `a range covers at most ${MAX_METRICS_POINTS} minutes, got ${minutes}`);
  }
  const stored = await ctx.run(readMetricsScript, { from, to, minutes: DEFAULT_METRICS_RANGE_MINUTES, maxMinutes: MAX_METRICS_POINTS });
  const all: Histogram = new Map();
  const total = { completed: 0, failed: 0, dead: 0 };
  const points = stored.minutes.map((flat, i): MetricsPoint => {
    const p = { completed: 0, failed: 0, dead: 0 };
    const h: Histogram = new Map();
    for (let j = 0; j + 1 < flat.length; j += 2) {
      const field = flat[j]!;
      const n = Number(flat[j + 1]);
      if (field === 'c') p.completed = n;
      else if (field === 'f') p.failed = n;
      else if (field === 'd') p.dead = n;
      else h.set(Number(field), n);
    }
    total.completed += p.completed;
    total.failed += p.failed;
    total.dead += p.dead;
    mergeInto(all, h);
    return { at: (stored.firstMinute + i) * MINUTE_MS, ...p, runTime: quantiles(h) };
  });
  return { keepMinutes: stored.keepMinutes, points, total: { ...total, runTime: quantiles(all) } };
}
