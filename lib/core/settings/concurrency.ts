import { ValidationError } from '../errors.js';
import { parseRateLimit, rateLimitSetting } from '../rate-limits/stored.js';
import type { RateLimit } from '../rate-limits/types.js';
import { assertGroupName, assertInt, assertOptions } from '../validate.js';

/**
 * The one owner of the fleet's shared concurrency settings: the queue-wide limit
 * (`globalConcurrency`) and per-group overrides of `groupConcurrency` / `groupLimiter`, each
 * checked here and encoded as configure-queue.lua stores them.
 */

/** One group's own limits, in place of the queue's `groupConcurrency` / `groupLimiter`. */
export interface GroupOverride {
  /** At most this many of the group's jobs leased at once (0: no limit for this group). */
  concurrency?: number;
  /**
   * The group's own rate limit, in place of `groupLimiter`. It applies while the queue has a
   * `groupLimiter` (the rotation checks group windows only then).
   */
  limiter?: RateLimit;
}

const OVERRIDE_KEYS = ['concurrency', 'limiter'] as const;
const MAX_CONCURRENCY = 2 ** 31;

/** `globalConcurrency` as stored: '' leaves it, '0' removes it. */
export function globalConcurrencySetting(value: unknown, field = 'globalConcurrency'): string {
  if (value === undefined) return '';
  assertInt(field, value, { max: MAX_CONCURRENCY });
  return String(value);
}

/** Stored form of one override: { c?, r? }; null removes the group's. */
interface StoredOverride {
  c?: number;
  r?: string;
}

function storedOverride(field: string, value: unknown): StoredOverride {
  if (value === null) return {};
  assertOptions(field, value, OVERRIDE_KEYS);
  const { concurrency, limiter } = value as GroupOverride;
  const out: StoredOverride = {};
  if (concurrency !== undefined) {
    assertInt(`${field}.concurrency`, concurrency, { max: MAX_CONCURRENCY });
    out.c = concurrency;
  }
  const r = rateLimitSetting(`${field}.limiter`, limiter);
  if (r === '0') throw new ValidationError(`${field}.limiter`, 'must be a limit: leave it out for the queue-wide groupLimiter');
  if (r !== undefined) out.r = r;
  return out;
}

/** Overrides by group (null: remove that group's), as configure-queue.lua reads them: '' none. */
export function groupOverridesSetting(value: unknown, field = 'groupOverrides'): string {
  if (value === undefined) return '';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(field, 'must be an object of group name -> { concurrency?, limiter? } (or null to remove one)');
  }
  const stored: Record<string, StoredOverride> = {};
  for (const group of Object.keys(value)) {
    assertGroupName(group, `${field} group`);
    stored[group] = storedOverride(`${field}['${group}']`, (value as Record<string, unknown>)[group]);
  }
  return Object.keys(stored).length === 0 ? '' : JSON.stringify(stored);
}

/** The overrides as queue-state.lua lists them: group, concurrency (-1 none), rate limit ('' none). */
export function parseGroupOverrides(flat: ReadonlyArray<string | number>): Record<string, GroupOverride> {
  const out: Record<string, GroupOverride> = {};
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const group = String(flat[i]);
    const o: GroupOverride = {};
    if (Number(flat[i + 1]) >= 0) o.concurrency = Number(flat[i + 1]);
    const limiter = parseRateLimit(String(flat[i + 2] ?? ''));
    if (limiter) o.limiter = limiter;
    out[group] = o;
  }
  return out;
}
