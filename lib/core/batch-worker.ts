import { MAX_LEASE_COUNT } from './defaults.js';
import { UnrecoverableError, ValidationError } from './errors.js';
import { HeldLease, JobView, type Job } from './job-view.js';
import { ErrorBackoff, LeaseWorker } from './lease-worker.js';
import { failureOutcome, successOutcome, type Outcome } from './outbox.js';
import { blockDuration, type Queue } from './queue.js';
import type { Lease, LeasedJob } from './types.js';
import { assertInt, assertOptions } from './validate.js';

/** What a batch handler says about one job of its batch (same index as the job). */
export type BatchOutcome<Result> =
  | { ok: true; result?: Result }
  /** Failed attempt (retried with backoff, or dead past its attempts); `retry: false` dead-letters now. */
  | { ok: false; error?: unknown; retry?: boolean };

/**
 * Receives up to `size` jobs at once. Return nothing (all completed without a result), or
 * one outcome per job in the same order; throw to fail every job of the batch (an
 * UnrecoverableError dead-letters them all).
 */
export type BatchHandler<Data, Result> = (
  jobs: Array<Job<Data>>,
) => Promise<ReadonlyArray<BatchOutcome<Result>> | void> | ReadonlyArray<BatchOutcome<Result>> | void;

export interface BatchWorkerOptions {
  /** Most jobs per batch (1 to 1000). */
  size: number;
  /** After the first job of a batch, wait up to this long for the batch to fill. Default 0. */
  waitMs?: number;
  /** Lease length for jobs without their own leaseMs. Default 30 s. */
  leaseMs?: number;
  /** Longest single wait on an empty queue before checking again. Default 5 s. */
  blockMs?: number;
  /** Touch the batch's leases at about half their length. Default true. */
  heartbeat?: boolean;
  /** On close, how long a running batch may finish before its jobs are given back. Default 10 s. */
  drainTimeoutMs?: number;
  /** Start at construction. Default true. */
  autostart?: boolean;
}

const OPTION_KEYS = ['size', 'waitMs', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart'] as const;

/**
 * Runs a handler on batches of jobs: one lease call fetches a batch (and settles the
 * previous one in the same script call), the handler gets `Job[]`, and its per-job outcomes
 * are settled together. Heartbeats cover every job of the running batch in one touch call.
 * One batch runs at a time; run several BatchWorkers for more. Stops by itself when its
 * queue is closed and drained, or deleted ('stopped' event).
 */
export class BatchWorker<Data = unknown, Result = unknown> extends LeaseWorker<Data, Result> {
  readonly size: number;
  readonly waitMs: number;
  private current: Array<HeldLease<Data>> = [];
  private running = false;
  private endStopSignal: () => void = () => undefined;
  private readonly stopSignal = new Promise<void>((resolve) => (this.endStopSignal = resolve));
  private wakeSleep: (() => void) | undefined;

  constructor(
    queue: Queue<Data, Result>,
    private readonly handler: BatchHandler<Data, Result>,
    options: BatchWorkerOptions,
  ) {
    assertOptions('batch worker options', options, OPTION_KEYS);
    assertInt('size', options.size, { min: 1, max: MAX_LEASE_COUNT });
    const waitMs = options.waitMs ?? 0;
    assertInt('waitMs', waitMs, { max: 2 ** 31 });
    super(queue, options);
    this.size = options.size;
    this.waitMs = waitMs;
    if (typeof handler !== 'function') throw new ValidationError('handler', 'must be a function');
    if (options.autostart ?? true) this.start();
  }

  /** Jobs of the batch running now. */
  override get inFlight(): number {
    return this.current.length;
  }

  // ---- the loop --------------------------------------------------------------

  protected override async runLoop(): Promise<void> {
    let woken = false;
    const errors = new ErrorBackoff();
    while (!this.stopping) {
      const step = await this.leaseAndSettle(this.size, woken, errors);
      if (!step) {
        woken = true;
        continue;
      }
      if ((step.closed || step.deleted) && step.leases.length === 0) {
        this.queueEnded(step.deleted);
        break;
      }
      woken = false;
      if (step.leases.length === 0) {
        woken = await this.block(step.paused ? this.blockMs : blockDuration(step, this.blockMs));
        continue;
      }
      this.hold(step.leases);
      if (this.current.length < this.size && this.waitMs > 0) await this.fill();
      if (this.stopping) break; // shutdown gives the held jobs back
      // The handler may hang: shutdown stops waiting for it after drainTimeoutMs.
      await Promise.race([this.runBatch(), this.stopSignal]);
    }
  }

  private hold(leases: Array<Lease<Data>>): void {
    for (const lease of leases) this.current.push(new HeldLease(lease));
    this.heartbeat.schedule();
  }

  /** Waits up to waitMs (from now) for more jobs, holding them in the current batch. */
  private async fill(): Promise<void> {
    const until = Date.now() + this.waitMs;
    while (this.current.length < this.size && !this.stopping) {
      const left = until - Date.now();
      if (left <= 0) break;
      let woken: boolean;
      try {
        woken = await this.queue.waitForWork(this.blocker!, left);
      } catch (error) {
        if (!this.stopping) this.subject.next({ type: 'error', error });
        break;
      }
      if (!woken || this.stopping) continue;
      try {
        const more = await this.queue.leaseStep([], this.size - this.current.length, this.leaseMs, true);
        this.hold(more.leases);
      } catch (error) {
        this.subject.next({ type: 'error', error });
        break;
      }
    }
  }

  /** A shutdown also ends an error pause. */
  protected override keepPauseWaker(wake: () => void): void {
    this.wakeSleep = wake;
  }

  // ---- running a batch ---------------------------------------------------------

  private async runBatch(): Promise<void> {
    const held = this.current;
    this.running = true;
    const jobs = held.map((h) => new JobView(h, this.heartbeat.touch));
    let outcomes: Array<Outcome<Data, Result>>;
    try {
      const returned = await this.handler(jobs);
      outcomes = this.fromReturned(held, returned);
    } catch (error) {
      outcomes = held.map((h) => failureOutcome(h, error, error instanceof UnrecoverableError));
    }
    if (this.current === held) this.current = [];
    this.running = false;
    // Jobs whose lease was lost (or given back at shutdown) are not settled.
    for (const o of outcomes) {
      if (o.held.lost) this.subject.next({ type: 'lost', job: o.held.lease.job });
      else this.outbox.push(o);
    }
    this.handlersFinished();
  }

  private fromReturned(held: Array<HeldLease<Data>>, returned: ReadonlyArray<BatchOutcome<Result>> | void): Array<Outcome<Data, Result>> {
    const success = (h: HeldLease<Data>, result: Result | undefined) => successOutcome<Data, Result>(h, result as Result, this.queue.maxPayloadBytes);
    if (returned === undefined || returned === null) return held.map((h) => success(h, undefined));
    if (!Array.isArray(returned) || returned.length !== held.length) {
      const error = new ValidationError(
        'batch handler result',
        `must be undefined or an array of ${held.length} outcomes (one per job), got ${Array.isArray(returned) ? `${returned.length} items` : typeof returned}`,
      );
      return held.map((h) => failureOutcome(h, error, false));
    }
    return held.map((h, i) => {
      const o = returned[i] as BatchOutcome<Result> | undefined;
      if (o && o.ok === true) return success(h, o.result);
      if (o && o.ok === false) return failureOutcome(h, o.error, o.retry === false || o.error instanceof UnrecoverableError);
      return failureOutcome(h, new ValidationError(`batch handler result[${i}]`, 'must be { ok: true, result? } or { ok: false, error?, retry? }'), false);
    });
  }

  protected override reportSettled(o: Outcome<Data, Result>, settled: boolean): void {
    if (settled) {
      if (o.event.type === 'dead' && !(o.event.error instanceof UnrecoverableError)) {
        this.subject.next({ type: 'failed', job: o.event.job, error: o.event.error, willRetry: false });
      }
      this.subject.next(o.event);
    } else this.subject.next({ type: 'lost', job: o.held.lease.job });
  }

  // ---- heartbeat ---------------------------------------------------------------

  protected override heldLeases(): Iterable<HeldLease<Data>> {
    return this.current;
  }

  protected override keepBeating(): boolean {
    return this.current.length > 0;
  }

  // ---- stopping ------------------------------------------------------------------

  /** Lets the running batch finish (up to drainTimeoutMs), then gives its jobs back. */
  protected override async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.running) await this.drainHandlers(drainTimeoutMs);
    // Still held: a batch that did not finish in time, or jobs leased while filling.
    const unfinished = this.current.filter((h) => !h.lost);
    this.current = [];
    for (const h of unfinished) h.giveBack();
    if (this.blocker) this.queue.closeBlocker(this.blocker); // interrupts a blocking wait
    this.wakeSleep?.();
    this.endStopSignal();
    await this.loopDone;
    await this.settleLast(unfinished);
    this.ended();
  }
}

export type { LeasedJob };
