import { newRequestId } from '../adds/ids.js';
import type { HeldLease } from './job-view.js';
import { RateLimitError, UnrecoverableError, type CancelledError } from '../errors.js';
import { readableThrown } from '../thrown.js';
import { ackItem, nackItem, rateLimitItem, rejectItem, requeueItem, type SettleItem } from '../settles/settle-items.js';
import type { LeasedJob } from '../leases/types.js';
import type { JobProgress } from '../management/read-types.js';
import { toJson } from '../validate.js';

export type WorkerEvent<Data, Result> =
  /** A handler started the job (reported only while someone subscribes). */
  | { type: 'active'; job: LeasedJob<Data> }
  /** A handler's `job.updateProgress()` was stored (reported only while someone subscribes). */
  | { type: 'progress'; job: LeasedJob<Data>; progress: JobProgress }
  | { type: 'completed'; job: LeasedJob<Data>; result: Result }
  | { type: 'failed'; job: LeasedJob<Data>; error: unknown; willRetry: boolean }
  | { type: 'dead'; job: LeasedJob<Data>; error: unknown }
  | { type: 'lost'; job: LeasedJob<Data> }
  /** `queue.cancel(id)` ended the job's lease while it ran: its signal aborted with `error`, its slot is free, its outcome dropped. */
  | { type: 'cancelled'; job: LeasedJob<Data>; error: CancelledError }
  /** The handler met a rate limit (RateLimitError): the job is back at the head, not a failed attempt. */
  | { type: 'rateLimited'; job: LeasedJob<Data>; delayMs: number }
  | { type: 'error'; error: unknown }
  /**
   * A lease call found fewer jobs than the worker had room for (the queue not paused):
   * nothing is left to lease for now (BullMQ's Worker 'drained'). Reported once, then again
   * only after the worker leased more jobs.
   */
  | { type: 'drained' }
  /** The queue was closed and drained (closeQueue) or deleted, or this Queue object was closed: the worker stopped by itself. */
  | { type: 'stopped'; reason: 'queue closed' | 'queue deleted' | 'queue object closed' };

/** The events of a job while it runs. */
export type ActivityEvent<Data> = Extract<WorkerEvent<Data, never>, { type: 'active' | 'progress' }>;
/** Every other event: outcomes, loop errors, 'stopped'. */
export type OutcomeEvent<Data, Result> = Exclude<WorkerEvent<Data, Result>, { type: 'active' | 'progress' }>;

/** A finished job: how to settle it, and the event to report once it is settled (none for a give-back). */
export interface Outcome<Data, Result> {
  held: HeldLease<Data>;
  item: SettleItem;
  event?: OutcomeEvent<Data, Result>;
}

/**
 * Thrown by a handler that has not started the job (e.g. a router whose line of jobs waiting
 * for a slot is cleared at shutdown): the worker gives the job back to pending at once, with no
 * failed attempt and no event.
 */
export class NotStartedError extends Error {
  constructor() {
    super('the job was not started; given back to the queue');
    this.name = 'NotStartedError';
  }
}

/** A job given back unstarted: requeued now, not counted as an attempt. */
export function giveBackOutcome<Data, Result>(held: HeldLease<Data>): Outcome<Data, Result> {
  return { held, item: requeueItem(held.lease, 0, 'shutdown') };
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

/**
 * What a handler threw, as its attempt's outcome: a give-back for NotStartedError, a dead
 * letter for UnrecoverableError, else a failed attempt. Never throws, whatever was thrown.
 */
export function thrownOutcome<Data, Result>(held: HeldLease<Data>, thrown: unknown): Outcome<Data, Result> {
  const error = readableThrown(thrown);
  if (error instanceof NotStartedError) return giveBackOutcome(held);
  return failureOutcome(held, error, error instanceof UnrecoverableError);
}

/**
 * A failed attempt (retried, or dead past its attempts); `deadNow` dead-letters at once. An
 * error that throws when read is replaced by one that describes it (lib/core/thrown.ts).
 */
export function failureOutcome<Data, Result>(
  held: HeldLease<Data>,
  failure: unknown,
  deadNow: boolean,
): Outcome<Data, Result> {
  const { job } = held.lease;
  let error = readableThrown(failure);
  if (error instanceof RateLimitError) {
    try {
      return { held, item: rateLimitItem(held.lease, error.delayMs, error.scope), event: { type: 'rateLimited', job, delayMs: error.delayMs } };
    } catch (invalid) {
      error = invalid; // a RateLimitError with a bad delay is a failed attempt, named as such
    }
  }
  if (deadNow) return { held, item: rejectItem(held.lease, error ?? 'rejected'), event: { type: 'dead', job, error } };
  const willRetry = job.attempt < job.maxAttempts;
  return {
    held,
    item: nackItem(held.lease, error),
    event: willRetry ? { type: 'failed', job, error, willRetry } : { type: 'dead', job, error },
  };
}

/**
 * One settle (or lease-and-settle) request: its id and the outcomes it carries. A request
 * that failed is sent again with the same id, so that if its first try was applied in
 * Redis (the reply was lost), the retry gets the first try's answers back.
 */
export interface SettleCall<Data, Result> {
  readonly reqId: string;
  readonly batch: Array<Outcome<Data, Result>>;
}

/**
 * Outcomes waiting to be settled: the next lease call carries them (or a settle call of
 * their own). `report` is told, per outcome, whether its settle took effect.
 */
export class Outbox<Data, Result> {
  private outcomes: Array<Outcome<Data, Result>> = [];
  /** Requests that failed, to be sent again as they were. */
  private failed: Array<SettleCall<Data, Result>> = [];

  constructor(private readonly report: (outcome: Outcome<Data, Result>, settled: boolean) => void) {}

  get length(): number {
    let n = this.outcomes.length;
    for (const call of this.failed) n += call.batch.length;
    return n;
  }

  push(outcome: Outcome<Data, Result>): void {
    this.outcomes.push(outcome);
  }

  /** Whether a waiting outcome is of a grouped job: its settle may free its group's slot. */
  get grouped(): boolean {
    const isGrouped = (o: Outcome<Data, Result>): boolean => o.held.lease.job.group !== undefined;
    return this.outcomes.some(isGrouped) || this.failed.some((call) => call.batch.some(isGrouped));
  }

  /** The next request: a failed one, as it was, or else everything waiting under a new id. */
  take(): SettleCall<Data, Result> {
    const retry = this.failed.shift();
    if (retry) return retry;
    const batch = this.outcomes;
    this.outcomes = [];
    return { reqId: newRequestId(), batch };
  }

  /** Everything, for the last calls at shutdown: the failed requests, then the rest under a new id. */
  drain(): Array<SettleCall<Data, Result>> {
    const calls = this.failed;
    this.failed = [];
    calls.push({ reqId: newRequestId(), batch: this.outcomes });
    this.outcomes = [];
    return calls;
  }

  /** The request failed: it goes first, unchanged, into the next call. */
  putBack(call: SettleCall<Data, Result>): void {
    this.failed.push(call);
  }

  /**
   * Reports `batch` by the call's answer (one per item, in order). An item answered undefined
   * was not sent (a partition away: partitions/partitioned-internals.ts): it waits for the next call.
   */
  settled(batch: Array<Outcome<Data, Result>>, results: ReadonlyArray<boolean | undefined>): void {
    const kept: Array<Outcome<Data, Result>> = [];
    batch.forEach((o, i) => {
      if (results[i] === undefined) kept.push(o);
      else this.report(o, results[i]);
    });
    if (kept.length > 0) this.outcomes.unshift(...kept);
  }
}
