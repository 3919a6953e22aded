import type { RunTimeQuantiles } from './types.js';

/**
 * The run-time buckets of history.lua, read back: bucket 0 holds run times under 1 ms, bucket
 * b >= 1 those in (2^((b-2)/4), 2^((b-1)/4)] ms. A bucket stands for its geometric middle, so
 * a quantile is off by at most 2^(1/8) - 1 (9 %) of the true one.
 */
const STEPS = 4;

/** The value bucket `b` stands for (ms). */
export function bucketValue(b: number): number {
  if (b <= 0) return 0;
  if (b === 1) return 1;
  const v = 2 ** ((b - 1.5) / STEPS);
  return v < 10 ? Math.round(v * 10) / 10 : Math.round(v);
}

/** Bucket -> attempts in it. */
export type Histogram = Map<number, number>;

/** Adds `from` into `into`. */
export function mergeInto(into: Histogram, from: Histogram): void {
  for (const [b, n] of from) into.set(b, (into.get(b) ?? 0) + n);
}

/** p50, p95 and p99 of a histogram: the bucket of each rank (nearest rank), read as its value. */
export function quantiles(h: Histogram): RunTimeQuantiles {
  let count = 0;
  for (const n of h.values()) count += n;
  if (count === 0) return { count, p50: null, p95: null, p99: null };
  const sorted = [...h.entries()].sort((a, b) => a[0] - b[0]);
  const at = (q: number): number => {
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    for (const [b, n] of sorted) {
      seen += n;
      if (seen >= rank) return bucketValue(b);
    }
    return bucketValue(sorted.at(-1)![0]);
  };
  return { count, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
