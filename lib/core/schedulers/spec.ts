import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { ValidationError } from '../errors.js';
import type { MissedPolicy, SchedulerSpec } from './types.js';
import { assertInt, assertOptions, assertString } from '../validate.js';
import { MAX_MS, MIN_EVERY_MS } from '../defaults.js';

/**
 * A scheduler's spec, checked, and the slots it gives. Cron expressions are parsed by
 * cron-parser, never here; every time given to these functions is Redis time.
 */

const SPEC_KEYS = ['cron', 'tz', 'everyMs', 'startAt', 'endAt', 'limit', 'missed'] as const;

/** A spec as stored: times as epoch ms, `missed` filled in. */
export type StoredSpec = SchedulerSpec & { startAt?: number; endAt?: number; missed: MissedPolicy };

/** Checks a spec (ValidationError naming the field) and returns its stored form. */
export function checkSpec(field: string, spec: unknown): StoredSpec {
  assertOptions(field, spec, SPEC_KEYS);
  const s = spec as Record<string, unknown>;
  if ((s.cron === undefined) === (s.everyMs === undefined)) throw new ValidationError(field, 'give cron or everyMs, exactly one');
  const bounds: Partial<StoredSpec> = {};
  const startAt = checkTime(`${field}.startAt`, s.startAt);
  const endAt = checkTime(`${field}.endAt`, s.endAt);
  if (startAt !== undefined) bounds.startAt = startAt;
  if (endAt !== undefined) bounds.endAt = endAt;
  if (startAt !== undefined && endAt !== undefined && endAt < startAt) throw new ValidationError(`${field}.endAt`, 'must not be before startAt');
  if (s.limit !== undefined) {
    assertInt(`${field}.limit`, s.limit, { min: 1, max: 2 ** 40 });
    bounds.limit = s.limit;
  }
  if (s.missed !== undefined && s.missed !== 'once' && s.missed !== 'skip') throw new ValidationError(`${field}.missed`, "must be 'once' or 'skip'");
  const missed = (s.missed as MissedPolicy | undefined) ?? 'once';
  if (s.everyMs !== undefined) {
    if (s.tz !== undefined) throw new ValidationError(`${field}.tz`, 'is for cron schedules only');
    assertInt(`${field}.everyMs`, s.everyMs, { min: MIN_EVERY_MS, max: MAX_MS });
    return { everyMs: s.everyMs, ...bounds, missed };
  }
  assertString(`${field}.cron`, s.cron, 256);
  let tz: string | undefined;
  if (s.tz !== undefined) {
    assertString(`${field}.tz`, s.tz, 64);
    tz = s.tz;
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz }); // cron-parser finds a bad zone only when computing
    } catch {
      throw new ValidationError(`${field}.tz`, `unknown time zone '${tz}'`);
    }
  }
  try {
    parseCron(s.cron, tz, 0).next();
  } catch (err) {
    throw new ValidationError(`${field}.cron`, `is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`);
  }
  return tz === undefined ? { cron: s.cron, ...bounds, missed } : { cron: s.cron, tz, ...bounds, missed };
}

function checkTime(field: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const ms = v instanceof Date ? v.getTime() : v;
  assertInt(field, ms, { max: 2 ** 51 });
  return ms;
}

function parseCron(cron: string, tz: string | undefined, from: number): CronExpression {
  return CronExpressionParser.parse(cron, { currentDate: new Date(from), tz: tz ?? 'UTC' });
}

/** The first slot strictly after `t`, ignoring startAt and endAt. */
function rawAfter(spec: StoredSpec, t: number): number {
  if ('everyMs' in spec) {
    const anchor = spec.startAt ?? 0;
    return anchor + (Math.floor((t - anchor) / spec.everyMs) + 1) * spec.everyMs;
  }
  return parseCron(spec.cron, spec.tz, t).next().getTime();
}

/** The last slot at or before `t`, ignoring startAt and endAt. */
function rawAtOrBefore(spec: StoredSpec, t: number): number {
  if ('everyMs' in spec) {
    const anchor = spec.startAt ?? 0;
    return anchor + Math.floor((t - anchor) / spec.everyMs) * spec.everyMs;
  }
  return parseCron(spec.cron, spec.tz, t + 1).prev().getTime(); // prev() is strictly before its base
}

/** The first slot strictly after `t` within startAt..endAt; null when none is left. */
export function slotAfter(spec: StoredSpec, t: number): number | null {
  const from = spec.startAt !== undefined && t < spec.startAt ? spec.startAt - 1 : t;
  const slot = rawAfter(spec, from);
  return spec.endAt !== undefined && slot > spec.endAt ? null : slot;
}

/** The last slot in (`after`, `t`] within startAt..endAt; null when none. */
export function lastSlotIn(spec: StoredSpec, after: number, t: number): number | null {
  const to = spec.endAt !== undefined ? Math.min(t, spec.endAt) : t;
  if (to <= after) return null;
  const slot = rawAtOrBefore(spec, to);
  if (slot <= after || (spec.startAt !== undefined && slot < spec.startAt)) return null;
  return slot;
}

/** What a tick writes for a scheduler whose next slot `next` came due at `now`. */
export interface SlotPlan {
  /** The one job for missed slots ('once'), or null. */
  catchUp: number | null;
  /** The new next slot (its job made ahead), or null: the scheduler ends. */
  next: number | null;
}

/**
 * Plans the move past the due slot `next` (its job already exists). Slots in (next, now]
 * had no tick to add them: they are missed, and follow the spec's policy. `made` jobs were
 * made so far, against the spec's limit.
 */
export function planAdvance(spec: StoredSpec, next: number, now: number, made: number): SlotPlan {
  const left = spec.limit === undefined ? Infinity : spec.limit - made;
  const missed = spec.missed === 'once' ? lastSlotIn(spec, next, now) : null;
  const catchUp = missed !== null && left >= 1 ? missed : null;
  const following = slotAfter(spec, Math.max(next, now));
  const room = left - (catchUp === null ? 0 : 1);
  return { catchUp, next: following !== null && room >= 1 ? following : null };
}
