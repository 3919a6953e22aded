/** At most `max` jobs leased per window of `durationMs` (docs/rate-limits.md). */
export interface RateLimit {
  max: number;
  durationMs: number;
}
