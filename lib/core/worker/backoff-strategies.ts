import type { CustomBackoff } from '../adds/types.js';
import { MAX_MS } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { LeasedJob } from '../leases/types.js';
import { rejectItem, type SettleItem } from '../settles/settle-items.js';
import { describeThrown } from '../thrown.js';
import { assertFunction, describe } from '../validate.js';
import type { Outcome } from './outbox.js';

/**
 * Chooses the delay before the retry of a failed attempt, in ms (a whole number, 0 to 2^41),
 * or 'dead' to dead-letter the job at once. `attempt`: the attempt that failed (1 = the first,
 * counted from the job's last retry). Not asked after the last attempt (`job.maxAttempts`):
 * the job dies.
 */
export type BackoffStrategy<Data = unknown> = (attempt: number, error: unknown, job: LeasedJob<Data>) => number | 'dead';

/** A worker's backoff strategies by name, for jobs whose backoff is `{ type: 'custom', strategy }`. */
export type BackoffStrategies<Data = unknown> = Readonly<Record<string, BackoffStrategy<Data>>>;

/** The `backoffStrategies` option: an object whose every value is a function. */
export function checkBackoffStrategies(field: string, value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(field, 'must be an object of backoff strategies by name');
  }
  for (const [name, strategy] of Object.entries(value)) assertFunction(`${field}.${name}`, strategy);
}

/**
 * A worker's strategies, applied to its failed attempts: a retry of a job whose backoff names
 * one waits for the delay it chose (sent with the nack, which the lease token fences as any
 * other), or the job dies at once. A strategy the worker does not have, one that throws or one
 * that answers something else leaves the retry to the built-in backoff (settles/policy.lua),
 * with one warning per strategy name.
 */
export class StrategyBackoff<Data> {
  private readonly warned = new Set<string>();

  constructor(
    private readonly strategies: BackoffStrategies<Data>,
    private readonly warn: (message: string) => void,
  ) {}

  /** `o` as its job's strategy makes it: only a failed attempt to be retried changes. */
  apply<Result>(o: Outcome<Data, Result>): Outcome<Data, Result> {
    const { job } = o.held.lease;
    const backoff = job.policy.backoff;
    if (backoff.type !== 'custom' || o.event?.type !== 'failed' || !o.event.willRetry) return o;
    const { error } = o.event;
    const chosen = this.choose(backoff, job, error);
    if (chosen === undefined) return o;
    if (chosen === 'dead') return { held: o.held, item: rejectItem(o.held.lease, error ?? 'rejected'), event: { type: 'dead', job, error } };
    const item: SettleItem = [...o.item];
    item[4] = chosen;
    return { ...o, item };
  }

  private choose(backoff: CustomBackoff, job: LeasedJob<Data>, error: unknown): number | 'dead' | undefined {
    const name = backoff.strategy;
    const strategy = Object.hasOwn(this.strategies, name) ? this.strategies[name] : undefined;
    if (!strategy) return this.fallBack(name, `no backoff strategy '${name}' on this worker`);
    let chosen: unknown;
    try {
      chosen = strategy(job.attempt, error, job);
    } catch (thrown) {
      return this.fallBack(name, `backoff strategy '${name}' threw: ${describeThrown(thrown)}`);
    }
    if (chosen === 'dead') return chosen;
    if (Number.isSafeInteger(chosen) && (chosen as number) >= 0 && (chosen as number) <= MAX_MS) return chosen as number;
    return this.fallBack(name, `backoff strategy '${name}' answered ${describe(chosen)}, not a delay in ms (0 to 2^41) or 'dead'`);
  }

  private fallBack(name: string, why: string): undefined {
    if (!this.warned.has(name)) {
      this.warned.add(name);
      this.warn(`${why}: its jobs retry with the built-in backoff (said once per worker and strategy)`);
    }
    return undefined;
  }
}
