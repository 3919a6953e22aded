import type { HeldLease } from './job-view.js';
import { ackItem, nackItem, rejectItem, type SettleItem } from './settle-items.js';
import type { LeasedJob } from './types.js';
import { toJson } from './validate.js';

export type WorkerEvent<Data, Result> =
  | { type: 'completed'; job: LeasedJob<Data>; result: Result }
  | { type: 'failed'; job: LeasedJob<Data>; error: unknown; willRetry: boolean }
  | { type: 'dead'; job: LeasedJob<Data>; error: unknown }
  | { type: 'lost'; job: LeasedJob<Data> }
  | { type: 'error'; error: unknown }
  /** The queue was closed and drained (closeQueue) or deleted: the worker stopped by itself. */
  | { type: 'stopped'; reason: 'queue closed' | 'queue deleted' };

/** A finished job: how to settle it, and the event to report once it is settled. */
export interface Outcome<Data, Result> {
  held: HeldLease<Data>;
  item: SettleItem;
  event: WorkerEvent<Data, Result>;
}

/** Completed with `result`; a result that cannot be stored is a failed attempt instead. */
export function successOutcome<Data, Result>(
  held: HeldLease<Data>,
  result: Result,
  maxPayloadBytes: number,
): Outcome<Data, Result> {
  try {
    const json = result === undefined ? '' : toJson('result', result, maxPayloadBytes);
    return { held, item: ackItem(held.lease, json), event: { type: 'completed', job: held.lease.job, result } };
  } catch (error) {
    return failureOutcome(held, error, false);
  }
}

/** A failed attempt (retried, or dead past its attempts); `deadNow` dead-letters at once. */
export function failureOutcome<Data, Result>(
  held: HeldLease<Data>,
  error: unknown,
  deadNow: boolean,
): Outcome<Data, Result> {
  const { job } = held.lease;
  if (deadNow) return { held, item: rejectItem(held.lease, error ?? 'rejected'), event: { type: 'dead', job, error } };
  const willRetry = job.attempt < job.maxAttempts;
  return {
    held,
    item: nackItem(held.lease, error),
    event: willRetry ? { type: 'failed', job, error, willRetry } : { type: 'dead', job, error },
  };
}

/**
 * Outcomes waiting to be settled: the next lease call carries them (or a settle call of
 * their own). `report` is told, per outcome, whether its settle took effect.
 */
export class Outbox<Data, Result> {
  private outcomes: Array<Outcome<Data, Result>> = [];

  constructor(private readonly report: (outcome: Outcome<Data, Result>, settled: boolean) => void) {}

  get length(): number {
    return this.outcomes.length;
  }

  push(outcome: Outcome<Data, Result>): void {
    this.outcomes.push(outcome);
  }

  /** Everything waiting, for one call. */
  take(): Array<Outcome<Data, Result>> {
    const batch = this.outcomes;
    this.outcomes = [];
    return batch;
  }

  /** The call carrying `batch` failed: it goes first into the next one. */
  putBack(batch: Array<Outcome<Data, Result>>): void {
    this.outcomes.unshift(...batch);
  }

  /** Reports `batch` by the call's answer (one boolean per item, in order). */
  settled(batch: Array<Outcome<Data, Result>>, results: readonly boolean[]): void {
    batch.forEach((o, i) => this.report(o, results[i] === true));
  }
}
