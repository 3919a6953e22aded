import { Subject, type Observable } from 'rxjs';
import type { RedisClient } from './connection.js';
import { DEFAULT_LEASE_MS, MAX_LEASE_COUNT } from './defaults.js';
import { QueueDeletedError, UnrecoverableError, ValidationError } from './errors.js';
import { blockDuration, type Queue } from './queue.js';
import { ackItem, nackItem, rejectItem, requeueItem, type SettleItem } from './settle-items.js';
import type { Lease, LeasedJob } from './types.js';
import { assertInt, assertOptions, toJson } from './validate.js';
import type { Job, WorkerEvent } from './worker.js';

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
const MAX_ERROR_BACKOFF_MS = 5000;

interface Held<Data> {
  lease: Lease<Data>;
  abort: AbortController;
  leaseLen: number;
  renewedAt: number;
  lost: boolean;
}

interface Outcome<Data, Result> {
  held: Held<Data>;
  item: SettleItem;
  event: WorkerEvent<Data, Result>;
}

/**
 * Runs a handler on batches of jobs: one lease call fetches a batch (and settles the
 * previous one in the same script call), the handler gets `Job[]`, and its per-job outcomes
 * are settled together. Heartbeats cover every job of the running batch in one touch call.
 * One batch runs at a time; run several BatchWorkers for more. Stops by itself when its
 * queue is closed and drained, or deleted ('stopped' event).
 */
export class BatchWorker<Data = unknown, Result = unknown> {
  readonly size: number;
  readonly waitMs: number;
  readonly leaseMs: number;
  private readonly blockMs: number;
  private readonly heartbeat: boolean;
  private readonly drainTimeoutMs: number;
  private readonly subject = new Subject<WorkerEvent<Data, Result>>();
  private current: Array<Held<Data>> = [];
  private outbox: Array<Outcome<Data, Result>> = [];
  private started = false;
  private stopping = false;
  private running = false;
  private blocker: RedisClient | undefined;
  private loopDone: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private beating = false;
  private batchDone: (() => void) | undefined;
  private endStopSignal: () => void = () => undefined;
  private readonly stopSignal = new Promise<void>((resolve) => (this.endStopSignal = resolve));
  private wakeSleep: (() => void) | undefined;
  /** Last time the loop made progress or began a healthy wait (for health checks). */
  lastActivityAt = 0;

  constructor(
    readonly queue: Queue<Data, Result>,
    private readonly handler: BatchHandler<Data, Result>,
    options: BatchWorkerOptions,
  ) {
    assertOptions('batch worker options', options, OPTION_KEYS);
    assertInt('size', options.size, { min: 1, max: MAX_LEASE_COUNT });
    this.size = options.size;
    this.waitMs = options.waitMs ?? 0;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.blockMs = options.blockMs ?? 5000;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    assertInt('waitMs', this.waitMs, { max: 2 ** 31 });
    assertInt('leaseMs', this.leaseMs, { min: 10, max: 2 ** 41 });
    assertInt('blockMs', this.blockMs, { min: 10, max: 2 ** 31 });
    assertInt('drainTimeoutMs', this.drainTimeoutMs, { max: 2 ** 31 });
    this.heartbeat = options.heartbeat ?? true;
    if (typeof handler !== 'function') throw new ValidationError('handler', 'must be a function');
    if (options.autostart ?? true) this.start();
  }

  /** Per-job outcomes of this process's batches, plus loop errors and 'stopped'. */
  get events(): Observable<WorkerEvent<Data, Result>> {
    return this.subject.asObservable();
  }

  get isRunning(): boolean {
    return this.started && !this.stopping;
  }

  /** Jobs of the batch running now. */
  get inFlight(): number {
    return this.current.length;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.blocker = this.queue.openBlocker();
    this.lastActivityAt = Date.now();
    this.loopDone = this.loop();
  }

  // ---- the loop --------------------------------------------------------------

  private async loop(): Promise<void> {
    let woken = false;
    let errorDelay = 0;
    while (!this.stopping) {
      const settling = this.outbox;
      this.outbox = [];
      let step;
      try {
        step = await this.queue.leaseStep(settling.map((o) => o.item), this.size, this.leaseMs, woken);
        errorDelay = 0;
      } catch (error) {
        this.outbox.unshift(...settling);
        errorDelay = await this.pauseAfterError(error, errorDelay);
        woken = true;
        continue;
      }
      this.lastActivityAt = Date.now();
      this.reportSettled(settling, step.settled);
      if ((step.closed || step.deleted) && step.leases.length === 0) {
        if (step.deleted) this.subject.next({ type: 'error', error: new QueueDeletedError(this.queue.name) });
        this.subject.next({ type: 'stopped', reason: step.deleted ? 'queue deleted' : 'queue closed' });
        void this.close().catch(() => undefined);
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
    const now = Date.now();
    for (const lease of leases) {
      this.current.push({ lease, abort: new AbortController(), leaseLen: lease.leaseMs, renewedAt: now, lost: false });
    }
    this.scheduleBeat();
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

  private async block(ms: number): Promise<boolean> {
    this.lastActivityAt = Date.now();
    try {
      return await this.queue.waitForWork(this.blocker!, ms);
    } catch (error) {
      if (!this.stopping) await this.pauseAfterError(error, 0);
      return true;
    }
  }

  private async pauseAfterError(error: unknown, previous: number): Promise<number> {
    if (this.stopping) return previous;
    this.subject.next({ type: 'error', error });
    const delay = Math.min(MAX_ERROR_BACKOFF_MS, previous ? previous * 2 : 100);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, delay);
      this.wakeSleep = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wakeSleep = undefined;
    return delay;
  }

  // ---- running a batch ---------------------------------------------------------

  private async runBatch(): Promise<void> {
    const held = this.current;
    this.running = true;
    const jobs = held.map((h) => this.jobView(h));
    let outcomes: Array<Outcome<Data, Result>>;
    try {
      const returned = await this.handler(jobs);
      outcomes = this.fromReturned(held, returned);
    } catch (error) {
      outcomes = held.map((h) => this.failure(h, error, error instanceof UnrecoverableError));
    }
    if (this.current === held) this.current = [];
    this.running = false;
    // Jobs whose lease was lost (or given back at shutdown) are not settled.
    for (const o of outcomes) {
      if (o.held.lost) this.subject.next({ type: 'lost', job: o.held.lease.job });
      else this.outbox.push(o);
    }
    this.batchDone?.();
  }

  private fromReturned(held: Array<Held<Data>>, returned: ReadonlyArray<BatchOutcome<Result>> | void): Array<Outcome<Data, Result>> {
    if (returned === undefined || returned === null) return held.map((h) => this.success(h, undefined));
    if (!Array.isArray(returned) || returned.length !== held.length) {
      const error = new ValidationError(
        'batch handler result',
        `must be undefined or an array of ${held.length} outcomes (one per job), got ${Array.isArray(returned) ? `${returned.length} items` : typeof returned}`,
      );
      return held.map((h) => this.failure(h, error, false));
    }
    return held.map((h, i) => {
      const o = returned[i] as BatchOutcome<Result> | undefined;
      if (o && o.ok === true) return this.success(h, o.result);
      if (o && o.ok === false) return this.failure(h, o.error, o.retry === false || o.error instanceof UnrecoverableError);
      return this.failure(h, new ValidationError(`batch handler result[${i}]`, 'must be { ok: true, result? } or { ok: false, error?, retry? }'), false);
    });
  }

  private success(h: Held<Data>, result: Result | undefined): Outcome<Data, Result> {
    try {
      const json = result === undefined ? '' : toJson('result', result, this.queue.maxPayloadBytes);
      return { held: h, item: ackItem(h.lease, json), event: { type: 'completed', job: h.lease.job, result: result as Result } };
    } catch (error) {
      return this.failure(h, error, false);
    }
  }

  private failure(h: Held<Data>, error: unknown, now: boolean): Outcome<Data, Result> {
    const { job } = h.lease;
    if (now) return { held: h, item: rejectItem(h.lease, error ?? 'rejected'), event: { type: 'dead', job, error } };
    const willRetry = job.attempt < job.maxAttempts;
    return {
      held: h,
      item: nackItem(h.lease, error),
      event: willRetry ? { type: 'failed', job, error, willRetry } : { type: 'dead', job, error },
    };
  }

  private jobView(h: Held<Data>): Job<Data> {
    const worker = this;
    return Object.assign(Object.create(null) as object, h.lease.job, {
      signal: h.abort.signal,
      get deadline() {
        return h.lease.deadline;
      },
      async touch(extendMs?: number): Promise<boolean> {
        const [ok] = await worker.queue.touchMany([h.lease], extendMs);
        if (ok) h.renewedAt = Date.now();
        else worker.markLost(h);
        return ok!;
      },
      reject(reason = 'rejected'): never {
        throw new UnrecoverableError(reason);
      },
    }) as Job<Data>;
  }

  private markLost(h: Held<Data>): void {
    if (h.lost) return;
    h.lost = true;
    h.abort.abort(new Error(`lease of job ${h.lease.job.id} was lost`));
  }

  private reportSettled(batch: Array<Outcome<Data, Result>>, results: boolean[]): void {
    batch.forEach((o, i) => {
      if (results[i]) {
        if (o.event.type === 'dead' && !(o.event.error instanceof UnrecoverableError)) {
          this.subject.next({ type: 'failed', job: o.event.job, error: o.event.error, willRetry: false });
        }
        this.subject.next(o.event);
      } else this.subject.next({ type: 'lost', job: o.held.lease.job });
    });
  }

  // ---- heartbeat ---------------------------------------------------------------

  private scheduleBeat(): void {
    if (!this.heartbeat || this.beatTimer) return;
    const shortest = Math.min(this.leaseMs, ...this.current.map((h) => h.leaseLen));
    this.beatTimer = setInterval(() => void this.beat(), Math.max(10, Math.floor(shortest / 4)));
    this.beatTimer.unref();
  }

  /** Touches, in one call, every held lease of the batch that has run half its length. */
  private async beat(): Promise<void> {
    if (this.current.length === 0 && this.beatTimer) {
      clearInterval(this.beatTimer);
      this.beatTimer = undefined;
      return;
    }
    if (this.beating) return;
    const now = Date.now();
    const due = this.current.filter((h) => !h.lost && now - h.renewedAt >= h.leaseLen / 2);
    if (due.length === 0) return;
    this.beating = true;
    try {
      const ok = await this.queue.touchMany(due.map((h) => h.lease));
      due.forEach((h, i) => {
        if (ok[i]) h.renewedAt = now;
        else this.markLost(h);
      });
    } catch (error) {
      this.subject.next({ type: 'error', error });
    } finally {
      this.beating = false;
    }
  }

  // ---- stopping ------------------------------------------------------------------

  /**
   * Stops leasing, lets the running batch finish for up to `drainTimeoutMs`, then gives its
   * jobs back to pending (no failed attempt) and aborts their signals. Idempotent.
   */
  async close(opts: { drainTimeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    if (this.stopping) return this.closing;
    this.stopping = true;
    this.closing = this.shutdown(opts.drainTimeoutMs ?? this.drainTimeoutMs);
    return this.closing;
  }

  private async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.running) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, drainTimeoutMs);
        this.batchDone = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.batchDone = undefined;
    }
    // Still held: a batch that did not finish in time, or jobs leased while filling.
    const unfinished = this.current.filter((h) => !h.lost);
    this.current = [];
    for (const h of unfinished) {
      h.lost = true; // its late outcome must not be settled
      h.abort.abort(new Error('worker is shutting down; the job was given back to the queue'));
    }
    if (this.blocker) this.queue.closeBlocker(this.blocker); // interrupts a blocking wait
    this.wakeSleep?.();
    this.endStopSignal();
    await this.loopDone;
    const settling = this.outbox;
    this.outbox = [];
    const items = [...settling.map((o) => o.item), ...unfinished.map((h) => requeueItem(h.lease, 0, 'shutdown'))];
    if (items.length) {
      try {
        const ok = await this.queue.settle(items);
        this.reportSettled(settling, ok.slice(0, settling.length));
      } catch (error) {
        this.subject.next({ type: 'error', error });
      }
    }
    if (this.beatTimer) clearInterval(this.beatTimer);
    this.beatTimer = undefined;
    this.started = false;
    this.subject.complete();
  }
}

export type { LeasedJob };
