import { DEFAULT_POLICY } from './defaults.js';
import type { Backoff } from './types.js';

/** Delay before retry number `failures` (1 = after the first failure), with jitter. */
export function backoffDelay(backoff: Backoff, failures: number, random: () => number = Math.random): number {
  const base =
    backoff.type === 'fixed'
      ? backoff.delayMs
      : Math.min(backoff.delayMs * 2 ** Math.max(0, failures - 1), backoff.maxDelayMs ?? DEFAULT_POLICY.backoff.maxDelayMs!);
  const jitter = backoff.jitter ?? DEFAULT_POLICY.backoff.jitter!;
  return Math.max(0, Math.round(base * (1 - jitter + 2 * jitter * random())));
}
