import { Subject, type Observable } from 'rxjs';
import type { RedisClient } from './connection.js';
import { DEFAULT_LEASE_MS, MAX_LEASE_COUNT } from './defaults.js';
import { QueueDeletedError, UnrecoverableError } from './errors.js';
import { HeldLease, JobView, type Job } from './job-view.js';
import { blockDuration, type LeaseStep, type Queue } from './queue.js';
import { ackItem, nackItem, rejectItem, requeueItem, type SettleItem } from './settle-items.js';
import type { Lease, LeasedJob } from './types.js';
import { assertFunction, assertInt, assertOptions, toJson } from './validate.js';

export type { Job } from './job-view.js';

export type Handler<Data, Result> = (job: Job<Data>) => Promise<Result> | Result;

export interface WorkerOptions {
  /** Jobs run at once. Default 1. */
  concurrency?: number;
  /** Lease length for jobs without their own leaseMs. Default 30 s. */
  leaseMs?: number;
  /** Longest single wait on an empty queue before checking again. Default 5 s. */
  blockMs?: number;
  /** Touch running jobs at about half their lease. Default true. */
  heartbeat?: boolean;
  /** On close, how long running handlers may finish before their jobs are given back. Default 10 s. */
  drainTimeoutMs?: number;
  /** Start at construction. Default true. */
  autostart?: boolean;
}

export type WorkerEvent<Data, Result> =
  | { type: 'completed'; job: LeasedJob<Data>; result: Result }
  | { type: 'failed'; job: LeasedJob<Data>; error: unknown; willRetry: boolean }
  | { type: 'dead'; job: LeasedJob<Data>; error: unknown }
  | { type: 'lost'; job: LeasedJob<Data> }
  | { type: 'error'; error: unknown }
  /** The queue was closed and drained (closeQueue) or deleted: the worker stopped by itself. */
  | { type: 'stopped'; reason: 'queue closed' | 'queue deleted' };

const WORKER_OPTION_KEYS = ['concurrency', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart'] as const;
const MAX_ERROR_BACKOFF_MS = 5000;
/**
 * An idle wait that times out without a wake-up token means nothing was added, so the
 * loop waits again without leasing; it leases anyway this often, in case a token was
 * taken by a consumer that died before leasing.
 */
const SAFETY_LEASE_MS = 30_000;
/** From this concurrency on, two lease calls may be in flight: Redis and Node overlap. */
const TWO_LANES_FROM = 4;

interface Outcome<Data, Result> {
  held: HeldLease<Data>;
  item: SettleItem;
  event: WorkerEvent<Data, Result>;
}

/**
 * The lease loop: keeps up to `concurrency` handlers busy, settles finished jobs and
 * leases the next ones in the same script call, heartbeats running jobs in one batch
 * call, waits on an empty queue without polling, and survives Redis restarts.
 */
export class Worker<Data = unknown, Result = unknown> {
  readonly concurrency: number;
  readonly leaseMs: number;
  private readonly blockMs: number;
  private readonly heartbeat: boolean;
  private readonly drainTimeoutMs: number;
  private readonly lanes: number;
  private readonly held = new Map<string, HeldLease<Data>>();
  private readonly subject = new Subject<WorkerEvent<Data, Result>>();
  private outbox: Array<Outcome<Data, Result>> = [];
  private running = 0;
  /** Slots promised to lease calls in flight. */
  private requested = 0;
  private started = false;
  private stopping = false;
  /** Lanes waiting on an empty queue (one on Redis, the others on that one). */
  private idleLanes = 0;
  private blockingLane = false;
  private blockWaiters: Array<(woken: boolean) => void> = [];
  private slotWaiters: Array<() => void> = [];
  private blocker: RedisClient | undefined;
  private loopDone: Promise<unknown> | undefined;
  private onDrained: (() => void) | undefined;
  private flushing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private beatDueAt = 0;
  private beating = false;
  private lastLeaseAt = 0;
  /** Last time the loop made progress or began a healthy wait (for health checks). */
  lastActivityAt = 0;

  constructor(
    readonly queue: Queue<Data, Result>,
    private readonly handler: Handler<Data, Result>,
    options: WorkerOptions = {},
  ) {
    assertOptions('worker options', options, WORKER_OPTION_KEYS);
    this.concurrency = options.concurrency ?? 1;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.blockMs = options.blockMs ?? 5000;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    assertInt('concurrency', this.concurrency, { min: 1, max: MAX_LEASE_COUNT });
    assertInt('leaseMs', this.leaseMs, { min: 10, max: 2 ** 41 });
    assertInt('blockMs', this.blockMs, { min: 10, max: 2 ** 31 });
    assertInt('drainTimeoutMs', this.drainTimeoutMs, { max: 2 ** 31 });
    this.heartbeat = options.heartbeat ?? true;
    assertFunction('handler', handler);
    this.lanes = this.concurrency >= TWO_LANES_FROM ? 2 : 1;
    if (options.autostart ?? true) this.start();
  }

  /** Worker-local outcomes (this process's handlers), plus loop errors. */
  get events(): Observable<WorkerEvent<Data, Result>> {
    return this.subject.asObservable();
  }

  get isRunning(): boolean {
    return this.started && !this.stopping;
  }

  /** Jobs whose handler is running now. */
  get inFlight(): number {
    return this.running;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.blocker = this.queue.openBlocker();
    this.lastActivityAt = Date.now();
    this.loopDone = Promise.all(Array.from({ length: this.lanes }, () => this.loop()));
    this.scheduleBeat();
  }

  // ---- the loop --------------------------------------------------------------

  private async loop(): Promise<void> {
    let woken = false;
    let errorDelay = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.running - this.requested;
      if (free <= 0) {
        await this.waitForSlot();
        continue;
      }
      const batch = this.takeOutbox();
      let step: LeaseStep<Data>;
      this.requested += free;
      try {
        step = await this.queue.leaseStep(
          batch.map((o) => o.item),
          free,
          this.leaseMs,
          woken,
        );
        errorDelay = 0;
      } catch (error) {
        this.outbox.unshift(...batch);
        errorDelay = await this.pauseAfterError(error, errorDelay);
        woken = true;
        continue;
      } finally {
        this.requested -= free;
      }
      this.lastActivityAt = this.lastLeaseAt = Date.now();
      this.settled(batch, step.settled);
      if ((step.closed || step.deleted) && step.leases.length === 0 && !this.stopping) {
        this.queueEnded(step.deleted);
        break;
      }
      if (this.stopping) {
        // Leased while stopping: give them straight back.
        if (step.leases.length) {
          await this.queue.settle(step.leases.map((l) => requeueItem(l, 0, 'shutdown'))).catch(() => undefined);
        }
        break;
      }
      for (const lease of step.leases) this.run(lease);
      woken = false;
      if (step.leases.length < free) {
        this.notifySlots(); // the unused part of the reservation is free for the other lane
        // Fewer jobs than free slots: the queue is drained (or paused) for now.
        if (this.outbox.length === 0) woken = await this.idle(step);
      }
    }
  }

  /** The queue was closed and is drained (closeQueue), or deleted: this worker stops. */
  private queueEnded(deleted: boolean): void {
    if (deleted) this.subject.next({ type: 'error', error: new QueueDeletedError(this.queue.name) });
    this.subject.next({ type: 'stopped', reason: deleted ? 'queue deleted' : 'queue closed' });
    void this.close().catch(() => undefined);
  }

  /** Waits for work: one lane blocks on Redis, any other waits for that one. */
  private async idle(step: LeaseStep<Data>): Promise<boolean> {
    this.idleLanes += 1;
    if (this.outbox.length) this.flushSoon(); // finished while we decided to wait
    try {
      if (this.blockingLane) return await new Promise<boolean>((resolve) => this.blockWaiters.push(resolve));
      this.blockingLane = true;
      let woken = false;
      try {
        let ms = step.paused ? this.blockMs : blockDuration(step, this.blockMs);
        for (;;) {
          woken = await this.block(ms);
          const timedOutIdle =
            !woken && !this.stopping && step.nextDue === undefined && this.outbox.length === 0;
          if (!timedOutIdle || Date.now() - this.lastLeaseAt >= SAFETY_LEASE_MS) break;
          ms = this.blockMs;
        }
      } finally {
        this.blockingLane = false;
        for (const resolve of this.blockWaiters.splice(0)) resolve(woken);
      }
      return woken;
    } finally {
      this.idleLanes -= 1;
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

  private waitForSlot(): Promise<void> {
    return new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private notifySlots(): void {
    for (const resolve of this.slotWaiters.splice(0)) resolve();
  }

  private async pauseAfterError(error: unknown, previous: number): Promise<number> {
    if (this.stopping) return previous;
    this.subject.next({ type: 'error', error });
    const delay = Math.min(MAX_ERROR_BACKOFF_MS, previous ? previous * 2 : 100);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, delay);
      this.slotWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
    return delay;
  }

  // ---- running handlers ------------------------------------------------------

  private run(lease: Lease<Data>): void {
    const held = new HeldLease(lease);
    this.held.set(lease.token, held);
    this.running += 1;
    if (held.leaseLen < this.leaseMs) this.scheduleBeat();
    let promise: Promise<Result>;
    try {
      promise = Promise.resolve(this.handler(new JobView(held, this.touchHeld)));
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.finish(held, this.successOutcome(held, result)),
      (error: unknown) => this.finish(held, this.failureOutcome(held, error)),
    );
  }

  private readonly touchHeld = async (held: HeldLease<Data>, extendMs?: number): Promise<boolean> => {
    const [ok] = await this.queue.touchMany([held.lease], extendMs);
    if (ok) held.renewedAt = Date.now();
    else this.markLost(held);
    return ok!;
  };

  private successOutcome(held: HeldLease<Data>, result: Result): Outcome<Data, Result> {
    try {
      const json = result === undefined ? '' : toJson('result', result, this.queue.maxPayloadBytes);
      return { held, item: ackItem(held.lease, json), event: { type: 'completed', job: held.lease.job, result } };
    } catch (error) {
      return this.failureOutcome(held, error);
    }
  }

  private failureOutcome(held: HeldLease<Data>, error: unknown): Outcome<Data, Result> {
    const { job } = held.lease;
    if (error instanceof UnrecoverableError) {
      return { held, item: rejectItem(held.lease, error), event: { type: 'dead', job, error } };
    }
    const willRetry = job.attempt < job.maxAttempts;
    return {
      held,
      item: nackItem(held.lease, error),
      event: willRetry ? { type: 'failed', job, error, willRetry } : { type: 'dead', job, error },
    };
  }

  private finish(held: HeldLease<Data>, outcome: Outcome<Data, Result>): void {
    held.finished = true;
    this.running -= 1;
    if (held.lost) {
      this.held.delete(held.lease.token);
    } else {
      // A 'dead' from the last attempt is also a failure of that attempt.
      const ev = outcome.event;
      if (ev.type === 'dead' && !(ev.error instanceof UnrecoverableError)) {
        this.subject.next({ type: 'failed', job: ev.job, error: ev.error, willRetry: false });
      }
      this.outbox.push(outcome);
      if (this.slotWaiters.length) this.notifySlots(); // a lane folds the settle into its next lease
      else if (this.idleLanes === this.lanes || this.stopping) this.flushSoon();
    }
    if (this.running === 0 && this.onDrained) this.onDrained();
  }

  private markLost(held: HeldLease<Data>): void {
    if (held.lost) return;
    held.lost = true;
    held.abort(new Error(`lease of job ${held.lease.job.id} was lost`));
    this.subject.next({ type: 'lost', job: held.lease.job });
    if (held.finished) this.held.delete(held.lease.token);
  }

  // ---- settling --------------------------------------------------------------

  private takeOutbox(): Array<Outcome<Data, Result>> {
    const batch = this.outbox;
    this.outbox = [];
    return batch;
  }

  private settled(batch: Array<Outcome<Data, Result>>, results: boolean[]): void {
    batch.forEach((o, i) => {
      this.held.delete(o.held.lease.token);
      if (results[i]) this.subject.next(o.event);
      else this.subject.next({ type: 'lost', job: o.held.lease.job });
    });
  }

  /** Settles the outbox on its own when no lane can fold it into a lease call. */
  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      let errorDelay = 0;
      while (this.outbox.length > 0 && (this.idleLanes === this.lanes || this.stopping)) {
        const batch = this.takeOutbox();
        try {
          this.settled(batch, await this.queue.settle(batch.map((o) => o.item)));
          errorDelay = 0;
        } catch (error) {
          this.outbox.unshift(...batch);
          if (this.stopping && this.queue.isClosed) return;
          this.subject.next({ type: 'error', error });
          errorDelay = Math.min(MAX_ERROR_BACKOFF_MS, errorDelay ? errorDelay * 2 : 100);
          await new Promise((r) => setTimeout(r, errorDelay));
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
  }

  // ---- heartbeat -------------------------------------------------------------

  /** One timer per worker, ticking at a quarter of the shortest lease held. */
  private scheduleBeat(): void {
    if (!this.heartbeat) return;
    let shortest = this.leaseMs;
    for (const h of this.held.values()) shortest = Math.min(shortest, h.leaseLen);
    const period = Math.max(10, Math.floor(shortest / 4));
    // A job with a shorter lease than the pending tick needs an earlier one.
    if (this.beatTimer && this.beatDueAt <= Date.now() + period) return;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.beatDueAt = Date.now() + period;
    this.beatTimer = setTimeout(() => {
      this.beatTimer = undefined;
      void this.beat().finally(() => {
        if (this.started && this.held.size + this.running + (this.stopping ? 0 : 1) > 0) this.scheduleBeat();
      });
    }, period);
    this.beatTimer.unref();
  }

  /** Touches, in one call, every held lease that has run half its length. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    const now = Date.now();
    const due = [...this.held.values()].filter((h) => !h.lost && now - h.renewedAt >= h.leaseLen / 2);
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

  // ---- stopping --------------------------------------------------------------

  /**
   * Stops leasing, lets running handlers finish for up to `drainTimeoutMs`, then gives
   * the unfinished jobs back to pending at once (no failed attempt) and aborts their
   * signals. Idempotent.
   */
  async close(opts: { drainTimeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    if (this.stopping) return this.closing;
    this.stopping = true;
    this.closing = this.shutdown(opts.drainTimeoutMs ?? this.drainTimeoutMs);
    return this.closing;
  }

  private async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.blocker) this.queue.closeBlocker(this.blocker); // interrupts a blocking wait
    this.notifySlots();
    for (const resolve of this.blockWaiters.splice(0)) resolve(false);
    await this.loopDone;
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, drainTimeoutMs);
        this.onDrained = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.onDrained = undefined;
    }
    const unfinished = [...this.held.values()].filter((h) => !h.finished && !h.lost);
    for (const h of unfinished) {
      h.lost = true; // its late outcome must not be settled
      h.abort(new Error('worker is shutting down; the job was given back to the queue'));
    }
    const batch = this.takeOutbox();
    const items = [...batch.map((o) => o.item), ...unfinished.map((h) => requeueItem(h.lease, 0, 'shutdown'))];
    if (items.length) {
      try {
        const ok = await this.queue.settle(items);
        this.settled(batch, ok.slice(0, batch.length));
      } catch (error) {
        this.subject.next({ type: 'error', error });
      }
    }
    await this.flushing;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.beatTimer = undefined;
    this.held.clear();
    this.started = false;
    this.subject.complete();
  }
}
