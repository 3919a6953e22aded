import { DEFAULT_BATCH_WAIT_MS, DEFAULT_CONCURRENCY, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../defaults.js';
import { UnrecoverableError, ValidationError } from '../errors.js';
import { IdleLanes } from './idle-lanes.js';
import { instruments, jobOutcome, observeProcess } from '../instrumentation/index.js';
import { startAttemptTimer } from './attempt-timeout.js';
import { HeldLease, JobView, type Job } from './job-view.js';
import { LeaseWorker } from './lease-worker.js';
import { ErrorBackoff } from './retry-delay.js';
import { failureOutcome, successOutcome, thrownOutcome, type Outcome } from './outbox.js';
import { isInstance } from '../thrown.js';
import { untilDue } from '../leases/leasing.js';
import type { Queue } from '../queue/queue.js';
import type { PartitionedQueue } from '../partitions/partitioned-queue.js';
import type { Lease, LeasedJob } from '../leases/types.js';
import { assertInt, assertOptions } from '../validate.js';
import { assertConcurrency } from './loop-options.js';
import type { BackoffStrategies } from './backoff-strategies.js';

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

export interface BatchWorkerOptions<Data = unknown> {
  /** Most jobs per batch (1 to 1000). */
  size: number;
  /**
   * Batches run at once (1 to 64). Each is leased, run and settled on its own, so one
   * batch's script call overlaps another's handler. Default 1: batches run one after another.
   * Can be changed while the worker runs (`worker.concurrency = n`).
   */
  concurrency?: number;
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
  /** Backoff strategies by name, as a Worker's (`WorkerOptions.backoffStrategies`). */
  backoffStrategies?: BackoffStrategies<Data>;
  /** The name `queue.getWorkers()` shows for this worker, as a Worker's (`WorkerOptions.appName`). */
  appName?: string;
  /** How long `queue.getWorkers()` lists this worker after it was last seen, as a Worker's (`WorkerOptions.workerTtlMs`). */
  workerTtlMs?: number;
}

const OPTION_KEYS = ['size', 'concurrency', 'waitMs', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart', 'backoffStrategies', 'appName', 'workerTtlMs'] as const;
/** What a batch's wait ends with when every job of it timed out or lost its lease. */
const BATCH_OVER = Symbol('every attempt of the batch is over');
const attemptOver = (h: HeldLease<unknown>): boolean => h.lost || h.timedOut !== undefined;

/**
 * Runs a handler on batches of jobs: one lease call fetches a batch (and settles the
 * previous one in the same script call), the handler gets `Job[]`, and its per-job outcomes
 * are settled together. Heartbeats cover every held job in one touch call. Up to
 * `concurrency` batches run at once, each in its own lane; one idle lane at a time waits on
 * Redis. Stops by itself when its queue is closed and drained, or deleted ('stopped' event).
 */
export class BatchWorker<Data = unknown, Result = unknown> extends LeaseWorker<Data, Result> {
  readonly size: number;
  private limit: number;
  /** Lanes running: `concurrency`, and for a while more after it was lowered. */
  private lanes = 0;
  readonly waitMs: number;
  /** The batches held now: filling or running, one per busy lane. */
  private readonly batches = new Set<Array<HeldLease<Data>>>();
  private runningBatches = 0;
  private endStopSignal: () => void = () => undefined;
  private readonly stopSignal = new Promise<void>((resolve) => (this.endStopSignal = resolve));
  private readonly pauseWakers: Array<() => void> = [];
  private readonly turns = new IdleLanes();
  /** Per running batch: ends it once every attempt of it is over. */
  private readonly overChecks = new Map<Array<HeldLease<Data>>, () => void>();

  constructor(
    queue: Queue<Data, Result> | PartitionedQueue<Data, Result>,
    private readonly handler: BatchHandler<Data, Result>,
    options: BatchWorkerOptions<Data>,
  ) {
    assertOptions('batch worker options', options, OPTION_KEYS);
    assertInt('size', options.size, { min: 1, max: MAX_LEASE_COUNT });
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    assertConcurrency('concurrency', concurrency, true);
    const waitMs = options.waitMs ?? DEFAULT_BATCH_WAIT_MS;
    assertInt('waitMs', waitMs, { max: MAX_TIMER_MS });
    super(queue, options);
    this.size = options.size;
    this.limit = concurrency;
    this.waitMs = waitMs;
    if (typeof handler !== 'function') throw new ValidationError('handler', 'must be a function');
    if (options.autostart ?? true) this.start();
  }

  /** Batches run at once. */
  get concurrency(): number {
    return this.limit;
  }

  /**
   * Changes it at once, checked as the option (ValidationError: nothing changes). Raised: the
   * new lanes lease now. Lowered: running batches finish, and the lanes above `n` end then
   * (idle ones at once).
   */
  set concurrency(n: number) {
    assertConcurrency('concurrency', n, true);
    this.limit = n;
    if (!this.started || this.stopping) return; // start() runs `concurrency` lanes
    while (this.lanes < n) this.addLane();
    if (this.lanes > n) this.turns.releaseAll();
  }

  /** Jobs of the batches held now. */
  override get inFlight(): number {
    let n = 0;
    for (const batch of this.batches) n += batch.length;
    return n;
  }

  /** Batches held now (filling or running): at most `concurrency`. */
  get batchesHeld(): number {
    return this.batches.size;
  }

  // ---- the lanes ---------------------------------------------------------------

  protected override runLoop(): Promise<unknown> {
    this.lanes = this.limit;
    return Promise.all(Array.from({ length: this.limit }, () => this.lane()));
  }

  private addLane(): void {
    this.lanes += 1;
    this.loopDone = Promise.all([this.loopDone, this.lane()]);
  }

  private async lane(): Promise<void> {
    let woken = false;
    const errors = new ErrorBackoff();
    while (!this.stopping) {
      if (this.lanes > this.limit) {
        // concurrency was lowered: this lane ends (the wait on Redis, if it was this lane's, passes on)
        this.lanes -= 1;
        this.turns.handOver();
        break;
      }
      if (this.paused) {
        await this.park();
        continue;
      }
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
      this.noteLeased(step, this.size);
      if (step.leases.length === 0) {
        // One idle lane at a time waits on Redis; the others queue behind it.
        const due = step.paused ? undefined : untilDue(step); // paused: no lease promotes a due job
        woken = await this.turns.turn(() => this.block(Math.min(this.blockMs, due ?? this.blockMs)), false, due);
        if (this.stopping) this.turns.releaseAll();
        continue;
      }
      const batch: Array<HeldLease<Data>> = [];
      this.batches.add(batch);
      this.hold(batch, step.leases);
      if (batch.length < this.size && this.waitMs > 0) await this.fill(batch);
      if (this.stopping) break; // shutdown gives the held jobs back
      // A full batch: more may be waiting, so the idle lanes lease too. Otherwise one of
      // them takes over the wait on Redis while this lane runs its batch.
      if (batch.length === this.size) this.turns.releaseAll();
      else this.turns.handOver();
      // The handler may hang: shutdown stops waiting for it after drainTimeoutMs.
      await Promise.race([this.runBatch(batch), this.stopSignal]);
    }
  }

  private hold(batch: Array<HeldLease<Data>>, leases: Array<Lease<Data>>): void {
    for (const lease of leases) batch.push(new HeldLease(lease));
    this.heartbeat.schedule();
  }

  /** Waits up to waitMs (from now) for more jobs, holding them in `batch`. */
  private async fill(batch: Array<HeldLease<Data>>): Promise<void> {
    const until = Date.now() + this.waitMs;
    while (batch.length < this.size && !this.stopping && !this.paused) {
      const left = until - Date.now();
      if (left <= 0) break;
      if (!(await this.blockAtMost(left)) || this.stopping || this.paused) continue;
      try {
        const more = await this.q.leaseStep([], this.size - batch.length, this.leaseMs, true, undefined, this.presence.due());
        this.hold(batch, more.leases);
      } catch (error) {
        this.subject.next({ type: 'error', error });
        break;
      }
    }
  }

  /** The shared blocking wait, given up by this caller after `ms`. */
  private async blockAtMost(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([this.block(ms), cut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A shutdown or pause() also ends an error pause. Each lane has at most one pause at a
   * time, so the last `lanes` wakers cover every pause still running.
   */
  protected override keepPauseWaker(wake: () => void): void {
    this.pauseWakers.push(wake);
    if (this.pauseWakers.length > this.lanes) this.pauseWakers.shift();
  }

  /**
   * Paused: the lane settles the outcomes of its last batch (no lease call takes them now),
   * then waits for resume().
   */
  private async park(): Promise<void> {
    while (this.outbox.length > 0 && !this.stopping) {
      const call = this.outbox.take();
      try {
        await this.sendSettle(call);
      } catch (error) {
        this.outbox.putBack(call);
        await this.pauseAfterError(error);
      }
    }
    if (this.paused && !this.stopping) await this.parked();
  }

  protected override wakeLanes(): void {
    this.turns.releaseAll();
    for (const wake of this.pauseWakers.splice(0)) wake();
  }

  /** A lane running a batch leases nothing before the batch ends (then it parks). */
  protected override leasingStopped(): boolean {
    return this.parkedLanes + this.runningBatches >= this.lanes;
  }

  // ---- running a batch ---------------------------------------------------------

  private async runBatch(held: Array<HeldLease<Data>>): Promise<void> {
    this.runningBatches += 1;
    if (this.paused) this.checkPaused(); // this lane leases no more: maybe the last one to stop
    const jobs = held.map((h) => new JobView(h, this.jobCalls));
    // Registered instruments (relq/metrics, relq/tracing) see the batch; none: one length check.
    const observed = instruments.length ? observeProcess(this.q.name, held.map((h) => h.lease.job)) : undefined;
    for (const job of jobs) this.jobStarted(job);
    // Each job's own timeoutMs aborts its signal and fails it, whatever the batch returns for
    // it; once every job timed out or lost its lease, the batch is over without waiting for
    // the handler (one that ignores its signals runs on, its late outcomes dropped).
    let check = (): void => undefined;
    const over = new Promise<typeof BATCH_OVER>((resolve) => (check = () => void (held.every(attemptOver) && resolve(BATCH_OVER))));
    this.overChecks.set(held, check);
    const stopTimers = held.map((h) => startAttemptTimer(h, check));
    let outcomes: Array<Outcome<Data, Result>>;
    try {
      const returned = await Promise.race([Promise.resolve().then(() => (observed ? observed.run(() => this.handler(jobs)) : this.handler(jobs))), over]);
      outcomes = returned === BATCH_OVER ? [] : this.fromReturned(held, returned);
    } catch (error) {
      outcomes = held.map((h) => thrownOutcome(h, error));
    } finally {
      for (const stop of stopTimers) stop();
      this.overChecks.delete(held);
    }
    // Jobs whose lease was lost (reported then), given back at shutdown or moved to the delayed
    // set by the handler are not settled; a failed attempt's delay may come from its job's
    // backoff strategy.
    const settle = held.map((h, i) => {
      const o = !h.live ? undefined : h.timedOut ? failureOutcome<Data, Result>(h, h.timedOut, false) : outcomes[i]!;
      return o?.item[0] === 'n' ? this.backoff.apply(o) : o;
    });
    observed?.end(held.map((h, i) => jobOutcome(settle[i]?.event, h)));
    this.batches.delete(held);
    this.runningBatches -= 1;
    for (const o of settle) if (o) this.outbox.push(o);
    if (this.runningBatches === 0) this.handlersFinished();
  }

  /** One outcome per job from what the handler returned; an item that throws when read fails its job. */
  private fromReturned(held: Array<HeldLease<Data>>, returned: ReadonlyArray<BatchOutcome<Result>> | void): Array<Outcome<Data, Result>> {
    const success = (h: HeldLease<Data>, result: Result | undefined) => successOutcome<Data, Result>(h, result as Result, this.q.maxPayloadBytes);
    if (returned === undefined || returned === null) return held.map((h) => success(h, undefined));
    const error = batchResultError(held.length, returned);
    if (error) return held.map((h) => failureOutcome(h, error, false));
    return held.map((h, i) => {
      try {
        const o = returned[i] as BatchOutcome<Result> | undefined;
        if (o && o.ok === true) return success(h, o.result);
        if (o && o.ok === false) return failureOutcome(h, o.error, o.retry === false || isInstance(o.error, UnrecoverableError));
        return failureOutcome(h, new ValidationError(`batch handler result[${i}]`, 'must be { ok: true, result? } or { ok: false, error?, retry? }'), false);
      } catch (unreadable) {
        return thrownOutcome(h, unreadable);
      }
    });
  }

  protected override abandon(held: HeldLease<Data>): void {
    for (const [batch, check] of this.overChecks) if (batch.includes(held)) check();
  }

  protected override reportSettled(o: Outcome<Data, Result>, settled: boolean): void {
    this.emitOutcome(o, settled);
  }

  // ---- heartbeat ---------------------------------------------------------------

  protected override *heldLeases(): Iterable<HeldLease<Data>> {
    for (const batch of this.batches) yield* batch;
  }

  protected override keepBeating(): boolean {
    return this.inFlight > 0 || (this.paused && !this.stopping); // paused: keeps the worker listed (workers/presence.ts)
  }

  // ---- stopping ------------------------------------------------------------------

  /** Lets running batches finish (up to drainTimeoutMs), then gives their jobs back. */
  protected override async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.runningBatches > 0) await this.drainHandlers(drainTimeoutMs);
    // Still held: batches that did not finish in time, or jobs leased while filling.
    const unfinished = this.takeHeld();
    for (const h of unfinished) h.giveBack();
    if (this.blocker) this.q.closeBlocker(this.blocker); // interrupts a blocking wait
    this.turns.releaseAll();
    for (const wake of this.pauseWakers.splice(0)) wake();
    this.endStopSignal();
    await this.loopDone;
    // Leased by a call that was in flight when the close began.
    await this.settleLast([...unfinished, ...this.takeHeld()]);
    await this.leave();
    this.ended();
  }

  /** Held jobs still this worker's (not lost or moved); they are no longer held. */
  private takeHeld(): Array<HeldLease<Data>> {
    const held = [...this.heldLeases()].filter((h) => h.live);
    this.batches.clear();
    return held;
  }
}

export type { LeasedJob };

/**
 * What a batch handler returned, when it is not undefined or one outcome per job: the error
 * every job of the batch then fails with (also used by the Nest batch router).
 */
export function batchResultError(jobs: number, returned: unknown): ValidationError | undefined {
  if (returned === undefined || returned === null || (Array.isArray(returned) && returned.length === jobs)) return undefined;
  const got = Array.isArray(returned) ? `${returned.length} items` : typeof returned;
  return new ValidationError('batch handler result', `must be undefined or an array of ${jobs} outcomes (one per job), got ${got}`);
}
