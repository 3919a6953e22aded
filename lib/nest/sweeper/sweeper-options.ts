import { DEFAULT_SWEEP_LIMIT, MAX_SWEEP_LIMIT, MAX_TIMER_MS } from '../../core/defaults.js';
import { assertBoolean, assertInt, assertNumber, assertOptions } from '../../core/validate.js';
import { DEFAULT_SWEEP_INTERVAL_MS, DEFAULT_SWEEP_JITTER } from '../defaults.js';
import { optionKeys } from '../option-keys.js';

/** The periodic `queue.sweep()` of each registered queue. */
export interface SweeperOptions {
  /** Default true. API-only instances may sweep too: it is safe from many processes. */
  enabled?: boolean;
  /** Average time between sweeps. Default 5 000. */
  intervalMs?: number;
  /** Random spread of each interval, 0 to 1: 0.2 waits intervalMs × [0.8, 1.2]. Default 0.2. */
  jitter?: number;
  /** Bound of each kind of work done by one sweep (`queue.sweep({ limit })`). Default 1 000. */
  limit?: number;
}

export type ResolvedSweeper = Required<SweeperOptions>;

/** What a queue sweeps with when neither forRoot nor registerQueue says otherwise. */
export const DEFAULT_SWEEPER: Readonly<ResolvedSweeper> = Object.freeze({
  enabled: true,
  intervalMs: DEFAULT_SWEEP_INTERVAL_MS,
  jitter: DEFAULT_SWEEP_JITTER,
  limit: DEFAULT_SWEEP_LIMIT,
});

const SWEEPER_KEYS = optionKeys<SweeperOptions>({ enabled: true, intervalMs: true, jitter: true, limit: true });

/** `sweeper` of forRoot (over the defaults) or of registerQueue (over the root's); `false` turns it off. */
export function resolveSweeper(s: SweeperOptions | false | undefined, base: Readonly<ResolvedSweeper>): ResolvedSweeper {
  if (s === undefined) return { ...base };
  if (s === false) return { ...base, enabled: false };
  assertOptions('sweeper', s, SWEEPER_KEYS);
  if (s.enabled !== undefined) assertBoolean('sweeper.enabled', s.enabled);
  if (s.intervalMs !== undefined) assertInt('sweeper.intervalMs', s.intervalMs, { min: 10, max: MAX_TIMER_MS });
  if (s.jitter !== undefined) assertNumber('sweeper.jitter', s.jitter, 0, 1);
  // queue.sweep() checks its limit on every call; checked here so that a bad one stops the app instead
  if (s.limit !== undefined) assertInt('sweeper.limit', s.limit, { min: 1, max: MAX_SWEEP_LIMIT });
  return {
    enabled: s.enabled ?? base.enabled,
    intervalMs: s.intervalMs ?? base.intervalMs,
    jitter: s.jitter ?? base.jitter,
    limit: s.limit ?? base.limit,
  };
}
