import { DEFAULT_POLICY, MAX_ERROR_TEXT, MAX_MS, MAX_RUN_AT, MAX_TIMER_MS } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { LeaseRef } from '../leases/types.js';
import { describeThrown } from '../thrown.js';
import { assertInt } from '../validate.js';
import type { ScriptArg } from '../redis/script-def.js';

/** One settle instruction for settle.lua / lease.lua: op, id, token, a1, a2. */
export type SettleItem = [op: 'a' | 'n' | 'q' | 'r' | 'l' | 'd' | 'w', id: string, token: string, a1: string, a2: string | number];

/** The built-in policy a record leaves out, as settles/policy.lua parses it: sent with every lease and settle call. */
export const POLICY_DEFAULTS_ARG = `${DEFAULT_POLICY.keepCompletedMs} ${DEFAULT_POLICY.dedupWindowMs} ${JSON.stringify(DEFAULT_POLICY.backoff)}`;

/**
 * A call's settle items as settles/settle-items.lua takes them: acks without a result go as id
 * and token only (a busy worker's usual outcome: 2 arguments instead of 5), after the others
 * in full. The script settles in that order, so when a job is named in both forms (the first
 * item wins) everything goes in full.
 */
export interface SettleBatch {
  readonly items: readonly SettleItem[];
  /** Positions in `items` of the items sent in full, then of the plain acks. */
  readonly full: readonly number[];
  readonly plain: readonly number[];
}

export function settleBatch(items: readonly SettleItem[]): SettleBatch {
  let full: number[] = [];
  let plain: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    if (it[0] === 'a' && it[3] === '') plain.push(i);
    else full.push(i);
  }
  if (full.length > 0 && plain.length > 0) {
    const fullIds = new Set(full.map((i) => items[i]![1]));
    if (plain.some((i) => fullIds.has(items[i]![1]))) {
      full = items.map((_, i) => i);
      plain = [];
    }
  }
  return { items, full, plain };
}

/** Appends the batch to a lease or settle call's arguments. */
export function pushSettleBatch(argv: ScriptArg[], { items, full, plain }: SettleBatch): void {
  argv.push(full.length);
  for (const i of full) argv.push(...items[i]!);
  argv.push(plain.length);
  for (const i of plain) argv.push(items[i]![1], items[i]![2]);
}

/** The script's answer (0/1 per item as sent) as one boolean per item, in the order of `items`. */
export function settledOf({ items, full, plain }: SettleBatch, answer: readonly number[]): boolean[] {
  const settled = new Array<boolean>(items.length);
  for (let k = 0; k < full.length; k++) settled[full[k]!] = answer[k] === 1;
  for (let k = 0; k < plain.length; k++) settled[plain[k]!] = answer[full.length + k] === 1;
  return settled;
}

/**
 * A lease as lease() returned it, or rebuilt from its job id and token: checked before its
 * fields are read, so that anything else is a ValidationError, not a TypeError.
 */
export function assertLease(value: unknown, field = 'lease'): asserts value is LeaseRef {
  const l = value as { job?: { id?: unknown }; token?: unknown } | null;
  const ok = typeof l === 'object' && l !== null && typeof l.job === 'object' && l.job !== null && typeof l.job.id === 'string' && typeof l.token === 'string';
  if (!ok) throw new ValidationError(field, 'must be a lease returned by lease(), or { job: { id }, token }');
}

export function ackItem(lease: LeaseRef, resultJson: string): SettleItem {
  assertLease(lease);
  return ['a', lease.job.id, lease.token, resultJson, ''];
}

/** A failed attempt; the retry delay follows the stored job's backoff unless given. */
export function nackItem(lease: LeaseRef, error: unknown, delayMs?: number): SettleItem {
  assertLease(lease);
  return ['n', lease.job.id, lease.token, errorText(error), delayMs ?? `b${Math.random()}`];
}

export function requeueItem(lease: LeaseRef, delayMs: number, reason: string): SettleItem {
  assertLease(lease);
  if (typeof reason !== 'string') throw new ValidationError('reason', 'must be a string');
  return ['q', lease.job.id, lease.token, errorText(reason), delayMs];
}

/**
 * Rate limited: back at the head without a failed attempt, and the job's group ('g', a
 * grouped job) or its queue ('q') held back for `delayMs` (rate-limits/limiter.lua).
 */
export function rateLimitItem(lease: LeaseRef, delayMs: unknown, scope: unknown = 'auto'): SettleItem {
  assertLease(lease);
  assertInt('delayMs', delayMs, { min: 1, max: MAX_TIMER_MS });
  if (scope !== 'auto' && scope !== 'queue') throw new ValidationError('scope', "must be 'auto' or 'queue'");
  return ['l', lease.job.id, lease.token, scope === 'queue' ? 'q' : 'g', delayMs];
}

/**
 * A step job its handler moved to the delayed set: due at `runAt` (epoch ms, Redis clock), or
 * `delayMs` from now on Redis's clock. Not a failed attempt (settles/settle-items.lua).
 */
export function delayItem(lease: LeaseRef, when: { runAt: unknown } | { delayMs: unknown }): SettleItem {
  assertLease(lease);
  if ('delayMs' in when) {
    assertInt('delayMs', when.delayMs, { max: MAX_MS });
    return ['d', lease.job.id, lease.token, '', `d${when.delayMs}`];
  }
  const at = when.runAt instanceof Date ? when.runAt.getTime() : when.runAt;
  assertInt('runAt', at, { max: MAX_RUN_AT });
  return ['d', lease.job.id, lease.token, '', `a${at}`];
}

/**
 * A running parent's handler waits for the children it added (job.waitForChildren): its lease
 * ends, the job runs again once they are done. Not a failed attempt (settles/settle-items.lua).
 */
export function waitChildrenItem(lease: LeaseRef): SettleItem {
  assertLease(lease);
  return ['w', lease.job.id, lease.token, '', 0];
}

export function rejectItem(lease: LeaseRef, reason: unknown): SettleItem {
  assertLease(lease);
  return ['r', lease.job.id, lease.token, errorText(reason), 0];
}

/** A failure as stored with the job: described without ever throwing, cut at MAX_ERROR_TEXT. */
export function errorText(error: unknown): string {
  const text = describeThrown(error);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
