/**
 * Splits lease times into a limiter's fixed windows (each opens with its first lease and
 * lasts durationMs) and returns how many leases each window held.
 */
export function windows(leasedAt: number[], durationMs: number): number[] {
  const sorted = [...leasedAt].sort((a, b) => a - b);
  const out: number[] = [];
  let end = -Infinity;
  for (const t of sorted) {
    if (t >= end) {
      out.push(0);
      end = t + durationMs;
    }
    out[out.length - 1]! += 1;
  }
  return out;
}
