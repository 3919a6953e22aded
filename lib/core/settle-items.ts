import { backoffDelay } from './backoff.js';
import type { Lease } from './types.js';

/** One settle instruction for settle.lua / lease.lua: op, id, token, a1, a2. */
export type SettleItem = [op: 'a' | 'n' | 'q' | 'r', id: string, token: string, a1: string, a2: string | number];

const MAX_ERROR_TEXT = 4096;

export function ackItem(lease: Lease<unknown>, resultJson: string): SettleItem {
  const { keepCompletedMs, dedupWindowMs } = lease.job.policy;
  return ['a', lease.job.id, lease.token, resultJson, `${keepCompletedMs} ${dedupWindowMs}`];
}

/** A failed attempt; the retry delay follows the job's backoff unless given. */
export function nackItem(lease: Lease<unknown>, error: unknown, delayMs?: number): SettleItem {
  const delay = delayMs ?? backoffDelay(lease.job.policy.backoff, lease.job.attempt);
  return ['n', lease.job.id, lease.token, errorText(error), delay];
}

export function requeueItem(lease: Lease<unknown>, delayMs: number, reason: string): SettleItem {
  return ['q', lease.job.id, lease.token, reason, delayMs];
}

export function rejectItem(lease: Lease<unknown>, reason: unknown): SettleItem {
  return ['r', lease.job.id, lease.token, errorText(reason), 0];
}

export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message ? `${error.name}: ${error.message}` : error.name;
  else if (typeof error === 'string') text = error;
  else if (error === undefined) text = 'failed';
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
