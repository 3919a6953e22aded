import type { LeasedJob } from '../leases/types.js';
import type { SweepResult } from '../management/read-types.js';

/**
 * The instrumentation hook: metrics (relq/metrics) and traces (relq/tracing) register an
 * Instrument here, and the engine tells every registered one what happens in this process.
 * With nothing registered the engine pays one length check per add and per handler run,
 * allocates nothing and sends nothing more to Redis.
 *
 * Not part of the public API (no entry point exports it): relq's own modules use it, and its
 * shape may change in any release.
 */
export interface Instrument {
  /** Jobs about to be added, by any call that adds (before the script call). */
  add?(info: AddInfo): AddScope | undefined;
  /** A handler is about to run on `jobs` (one job, or a BatchWorker's batch). */
  process?(queue: string, jobs: ReadonlyArray<LeasedJob<unknown>>): ProcessScope | undefined;
  /** A sweep of `queue` by this process answered. */
  sweep?(queue: string, result: SweepResult): void;
}

export interface AddInfo {
  queue: string;
  /**
   * The call that adds: 'add' / 'tryAdd' one job, 'addBulk' / 'tryAddBulk' a list (even of
   * one), 'addFlow' a flow's jobs, 'addChildren' a running job's children (job.addChildren), 'upsertScheduler' a scheduler's first slot's job,
   * 'runSchedulers' the slots' jobs of a scheduler tick.
   */
  op: 'add' | 'tryAdd' | 'addBulk' | 'tryAddBulk' | 'addFlow' | 'addChildren' | 'upsertScheduler' | 'runSchedulers';
  /** The ids of the jobs the call may create, known before it (generated, the caller's, or the slots'). */
  ids: readonly string[];
}

export interface AddScope {
  /**
   * A propagation carrier (e.g. `{ traceparent }`) stored with every job of the call, and
   * handed back with its lease (traceContextOf). Only one instrument provides it.
   */
  readonly traceContext?: Readonly<Record<string, string>>;
  /** The call answered (`created`: one flag per job) or failed (`error`). */
  end(created: readonly boolean[] | undefined, error?: unknown): void;
}

/**
 * How a handler's run on one job ended: 'given-back' when it never started the job (e.g. at
 * shutdown), 'lost' when its lease was lost before the outcome, 'delayed' when the handler
 * moved its job to the delayed set (a step job), 'waiting-children' when it waits for the
 * children it added, 'cancelled' when `queue.cancel(id)` ended it while it ran.
 */
export type OutcomeKind = 'completed' | 'retried' | 'dead' | 'rate-limited' | 'delayed' | 'waiting-children' | 'given-back' | 'cancelled' | 'lost';

export interface JobOutcome {
  kind: OutcomeKind;
  /** The failure of a 'retried' or 'dead' outcome. */
  error?: unknown;
}

export interface ProcessScope {
  /** Runs the handler (e.g. inside a span's context); returns what it returns. */
  run<T>(handler: () => T): T;
  /** The handler's outcomes, one per job, in the order of the jobs. */
  end(outcomes: readonly JobOutcome[]): void;
}

/** The registered instruments; the engine checks its length before anything else. */
export const instruments: Instrument[] = [];

/** Registers `instrument`; returns the call that removes it. */
export function registerInstrument(instrument: Instrument): () => void {
  instruments.push(instrument);
  return () => {
    const at = instruments.indexOf(instrument);
    if (at >= 0) instruments.splice(at, 1);
  };
}
