import { backoffDelay } from './backoff.js';
import { ValidationError } from './errors.js';
import type { Lease } from './types.js';

/** One settle instruction for settle.lua / lease.lua: op, id, token, a1, a2. */
export type SettleItem = [op: 'a' | 'n' | 'q' | 'r', id: string, token: string, a1: string, a2: string | number];

const MAX_ERROR_TEXT = 4096;

/**
 * Appends `items` to a lease or settle call's arguments (include/settle.lua): acks without a
 * result that share the first such ack's policy go as id and token only (a busy worker's
 * usual outcome: 2 arguments instead of 5), after the others in full. The script settles in
 * that order, so when a job is named in both forms (the first item wins) everything goes in
 * full.
 * Returns the decoder of the script's answer: one boolean per item, in the order of `items`.
 */
export function appendSettleItems(args: Array<string | number>, items: readonly SettleItem[]): (answer: readonly number[]) => boolean[] {
  let full: number[] = [];
  let plain: number[] = [];
  let shared: string | number = '';
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    if (it[0] === 'a' && it[3] === '' && (plain.length === 0 || it[4] === shared)) {
      shared = it[4];
      plain.push(i);
    } else full.push(i);
  }
  if (full.length > 0 && plain.length > 0) {
    const fullIds = new Set(full.map((i) => items[i]![1]));
    if (plain.some((i) => fullIds.has(items[i]![1]))) {
      full = items.map((_, i) => i);
      plain = [];
    }
  }
  args.push(full.length);
  for (const i of full) args.push(...items[i]!);
  args.push(plain.length, plain.length ? shared : '');
  for (const i of plain) args.push(items[i]![1], items[i]![2]);
  return (answer) => {
    const settled = new Array<boolean>(items.length);
    for (let k = 0; k < full.length; k++) settled[full[k]!] = answer[k] === 1;
    for (let k = 0; k < plain.length; k++) settled[plain[k]!] = answer[full.length + k] === 1;
    return settled;
  };
}

/**
 * A lease as lease() returned it: checked before its fields are read, so that anything else
 * is a ValidationError, not a TypeError.
 */
export function assertLease(value: unknown, field = 'lease'): asserts value is Lease<unknown> {
  const l = value as { job?: { id?: unknown; policy?: unknown }; token?: unknown } | null;
  const ok =
    typeof l === 'object' &&
    l !== null &&
    typeof l.job === 'object' &&
    l.job !== null &&
    typeof l.job.id === 'string' &&
    typeof l.job.policy === 'object' &&
    l.job.policy !== null &&
    typeof l.token === 'string';
  if (!ok) throw new ValidationError(field, 'must be a lease returned by lease() (job.id, job.policy and token)');
}

export function ackItem(lease: Lease<unknown>, resultJson: string): SettleItem {
  assertLease(lease);
  const { keepCompletedMs, dedupWindowMs } = lease.job.policy;
  return ['a', lease.job.id, lease.token, resultJson, `${keepCompletedMs} ${dedupWindowMs}`];
}

/** A failed attempt; the retry delay follows the job's backoff unless given. */
export function nackItem(lease: Lease<unknown>, error: unknown, delayMs?: number): SettleItem {
  assertLease(lease);
  const delay = delayMs ?? backoffDelay(lease.job.policy.backoff, lease.job.attempt);
  return ['n', lease.job.id, lease.token, errorText(error), delay];
}

export function requeueItem(lease: Lease<unknown>, delayMs: number, reason: string): SettleItem {
  assertLease(lease);
  if (typeof reason !== 'string') throw new ValidationError('reason', 'must be a string');
  return ['q', lease.job.id, lease.token, errorText(reason), delayMs];
}

export function rejectItem(lease: Lease<unknown>, reason: unknown): SettleItem {
  assertLease(lease);
  return ['r', lease.job.id, lease.token, errorText(reason), 0];
}

export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message ? `${error.name}: ${error.message}` : error.name;
  else if (typeof error === 'string') text = error;
  else if (error === undefined) text = 'failed';
  else text = describeValue(error);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

/** Any thrown value as text: JSON where it has some, else String(), else its tag (a cyclic object without prototype has neither). */
function describeValue(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    // cyclic, or holding a BigInt
  }
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
