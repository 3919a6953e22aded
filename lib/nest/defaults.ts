// Defaults of what only the Nest layer has. The engine's own (lease length, sweep limit, job
// policy, prefix, payload limit, concurrency) live in lib/core/defaults.ts.

/** `sweeper.intervalMs`. */
export const DEFAULT_SWEEP_INTERVAL_MS = 5000;
/** `sweeper.jitter`. */
export const DEFAULT_SWEEP_JITTER = 0.2;
// `shutdown.drainTimeoutMs` and a loop's `blockMs` are the engine's (DEFAULT_DRAIN_TIMEOUT_MS,
// DEFAULT_BLOCK_MS in lib/core/defaults.ts).
/** `health.timeoutMs`: the PING and each Redis read of a health check. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 2000;

/** `health.loopStallMs`: a loop may wait blockMs on Redis, plus time for the call itself. */
export function defaultLoopStallMs(blockMs: number): number {
  return blockMs + 10_000;
}

/** `health.sweeperStaleMs`: three missed intervals, plus time for a slow sweep. */
export function defaultSweeperStaleMs(intervalMs: number): number {
  return 3 * intervalMs + 5000;
}
