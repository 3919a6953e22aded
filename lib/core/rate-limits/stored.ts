import { MAX_TIMER_MS } from '../defaults.js';
import { assertInt, assertOptions } from '../validate.js';
import type { RateLimit } from './types.js';

const RATE_LIMIT_KEYS = ['max', 'durationMs'] as const;

/**
 * A rate limit option (`limiter`, `groupLimiter`), checked, as stored for limiter.lua:
 * '<max>:<durationMs>', or '0' for `{ max: 0, durationMs: 0 }` (remove it).
 */
export function rateLimitSetting(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  assertOptions(field, value, RATE_LIMIT_KEYS);
  const { max, durationMs } = value as { max?: unknown; durationMs?: unknown };
  if (max === 0 && durationMs === 0) return '0';
  assertInt(`${field}.max`, max, { min: 1, max: 2 ** 31 });
  assertInt(`${field}.durationMs`, durationMs, { min: 1, max: MAX_TIMER_MS });
  return `${max}:${durationMs}`;
}

/** A stored rate limit as the queue's state reports it ('' when none is stored). */
export function parseRateLimit(stored: string): RateLimit | undefined {
  if (!stored) return undefined;
  const [max, durationMs] = stored.split(':').map(Number);
  return { max: max!, durationMs: durationMs! };
}
