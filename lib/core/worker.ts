import { Subject, type Observable } from 'rxjs';
import type { RedisClient } from './connection.js';
import { DEFAULT_LEASE_MS, MAX_LEASE_COUNT } from './defaults.js';
import { QueueDeletedError, UnrecoverableError } from './errors.js';
import { blockDuration, type Queue } from './queue.js';
import { ackItem, errorText, nackItem, rejectItem, requeueItem, type SettleItem } from './settle-items.js';
import type { Lease, LeasedJob } from './types.js';
import { assertFunction, assertInt, assertOptions, toJson } from './validate.js';

/** The job as a handler sees it. */
export interface Job<Data> extends LeasedJob<Data> {
  /** Aborts when the lease is lost or the worker gives the job back at shutdown. */
  readonly signal: AbortSignal;
  /** Current lease deadline (Redis clock, epoch ms). */
  readonly deadline: number;
  /** Extends the lease now; false once it is lost. The worker also heartbeats by itself. */
  touch(extendMs?: number): Promise<boolean>;
  /** Dead-letters the job at once (no further attempts). */
  reject(reason?: string): never;
}

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

interface Active<Data> {
  lease: Lease<Data>;
  abort: AbortController;
  leaseLen: number;
  renewedAt: number;
  /** The handler has returned or thrown. */
  finished: boolean;
  lost: boolean;
}

interface Outcome<Data, Result> {
  entry: Active<Data>;
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
  private readonly active = new Map<string, Active<Data>>();
  private readonly subject = new Subject<WorkerEvent<Data, Result>>();
  private outbox: Array<Outcome<Data, Result>> = [];
  private running = 0;
  private started = false;
  private stopping = false;
  private blocked = false;
  private blocker: RedisClient | undefined;
  private loopDone: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;
  private idle: (() => void) | undefined;
  private flushing: Promise<void> | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private beatDueAt = 0;
  private beating = false;
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
    this.loopDone = this.loop();
    this.scheduleBeat();
  }

  // ---- the loop --------------------------------------------------------------

  private async loop(): Promise<void> {
    let woken = false;
    let errorDelay = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.running;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wakeLoop = resolve));
        this.wakeLoop = undefined;
        continue;
      }
      const batch = this.takeOutbox();
      let step;
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
      }
      this.lastActivityAt = Date.now();
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
      // Fewer jobs than free slots: the queue is drained (or paused) for now.
      if (step.leases.length < free && this.outbox.length === 0) {
        woken = await this.block(step.paused ? this.blockMs : blockDuration(step, this.blockMs));
      }
    }
  }

  /** The queue was closed and is drained (closeQueue), or deleted: this worker stops. */
  private queueEnded(deleted: boolean): void {
    if (deleted) this.subject.next({ type: 'error', error: new QueueDeletedError(this.queue.name) });
    this.subject.next({ type: 'stopped', reason: deleted ? 'queue deleted' : 'queue closed' });
    void this.close().catch(() => undefined);
  }

  private async block(ms: number): Promise<boolean> {
    this.blocked = true;
    this.lastActivityAt = Date.now();
    if (this.outbox.length) this.flushSoon(); // finished while we decided to wait
    try {
      return await this.queue.waitForWork(this.blocker!, ms);
    } catch (error) {
      if (!this.stopping) await this.pauseAfterError(error, 0);
      return true;
    } finally {
      this.blocked = false;
    }
  }

  private async pauseAfterError(error: unknown, previous: number): Promise<number> {
    if (this.stopping) return previous;
    this.subject.next({ type: 'error', error });
    const delay = Math.min(MAX_ERROR_BACKOFF_MS, previous ? previous * 2 : 100);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, delay);
      this.wakeLoop = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wakeLoop = undefined;
    return delay;
  }

  // ---- running handlers ------------------------------------------------------

  private run(lease: Lease<Data>): void {
    const entry: Active<Data> = {
      lease,
      abort: new AbortController(),
      leaseLen: lease.leaseMs,
      renewedAt: Date.now(),
      finished: false,
      lost: false,
    };
    this.active.set(lease.token, entry);
    this.running += 1;
    if (entry.leaseLen < this.leaseMs) this.scheduleBeat();
    const job = this.jobView(entry);
    let promise: Promise<Result>;
    try {
      promise = Promise.resolve(this.handler(job));
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.finish(entry, this.successOutcome(entry, result)),
      (error: unknown) => this.finish(entry, this.failureOutcome(entry, error)),
    );
  }

  private successOutcome(entry: Active<Data>, result: Result): Outcome<Data, Result> {
    try {
      const json = result === undefined ? '' : toJson('result', result, this.queue.maxPayloadBytes);
      return { entry, item: ackItem(entry.lease, json), event: { type: 'completed', job: entry.lease.job, result } };
    } catch (error) {
      return this.failureOutcome(entry, error);
    }
  }

  private failureOutcome(entry: Active<Data>, error: unknown): Outcome<Data, Result> {
    const { job } = entry.lease;
    if (error instanceof UnrecoverableError) {
      return { entry, item: rejectItem(entry.lease, error), event: { type: 'dead', job, error } };
    }
    const willRetry = job.attempt < job.maxAttempts;
    return {
      entry,
      item: nackItem(entry.lease, error),
      event: willRetry ? { type: 'failed', job, error, willRetry } : { type: 'dead', job, error },
    };
  }

  private finish(entry: Active<Data>, outcome: Outcome<Data, Result>): void {
    entry.finished = true;
    this.running -= 1;
    if (entry.lost) {
      this.active.delete(entry.lease.token);
    } else {
      if (outcome.event.type === 'failed' || outcome.event.type === 'dead') {
        // A 'dead' from the last attempt is also a failure of that attempt.
        if (outcome.event.type === 'dead' && !(outcome.event.error instanceof UnrecoverableError)) {
          this.subject.next({ type: 'failed', job: outcome.event.job, error: outcome.event.error, willRetry: false });
        }
      }
      this.outbox.push(outcome);
      if (this.wakeLoop) this.wakeLoop();
      else if (this.blocked || this.stopping) this.flushSoon();
    }
    if (this.running === 0 && this.idle) this.idle();
  }

  private jobView(entry: Active<Data>): Job<Data> {
    const worker = this;
    // A literal, not Object.assign: assign would copy the deadline getter's value once.
    return {
      ...entry.lease.job,
      signal: entry.abort.signal,
      get deadline() {
        return entry.lease.deadline;
      },
      async touch(extendMs?: number): Promise<boolean> {
        const [ok] = await worker.queue.touchMany([entry.lease], extendMs);
        if (ok) entry.renewedAt = Date.now();
        else worker.markLost(entry);
        return ok!;
      },
      reject(reason = 'rejected'): never {
        throw new UnrecoverableError(reason);
      },
    };
  }

  private markLost(entry: Active<Data>): void {
    if (entry.lost) return;
    entry.lost = true;
    entry.abort.abort(new Error(`lease of job ${entry.lease.job.id} was lost`));
    this.subject.next({ type: 'lost', job: entry.lease.job });
    if (entry.finished) this.active.delete(entry.lease.token);
  }

  // ---- settling --------------------------------------------------------------

  private takeOutbox(): Array<Outcome<Data, Result>> {
    const batch = this.outbox;
    this.outbox = [];
    return batch;
  }

  private settled(batch: Array<Outcome<Data, Result>>, results: boolean[]): void {
    batch.forEach((o, i) => {
      this.active.delete(o.entry.lease.token);
      if (results[i]) this.subject.next(o.event);
      else this.subject.next({ type: 'lost', job: o.entry.lease.job });
    });
  }

  /** Settles the outbox on its own when the loop cannot fold it into a lease call. */
  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      let errorDelay = 0;
      while (this.outbox.length > 0 && (this.blocked || this.stopping)) {
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
    for (const e of this.active.values()) shortest = Math.min(shortest, e.leaseLen);
    const period = Math.max(10, Math.floor(shortest / 4));
    // A job with a shorter lease than the pending tick needs an earlier one.
    if (this.beatTimer && this.beatDueAt <= Date.now() + period) return;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.beatDueAt = Date.now() + period;
    this.beatTimer = setTimeout(() => {
      this.beatTimer = undefined;
      void this.beat().finally(() => {
        if (this.started && this.active.size + this.running + (this.stopping ? 0 : 1) > 0) this.scheduleBeat();
      });
    }, period);
    this.beatTimer.unref();
  }

  /** Touches, in one call, every held lease that has run half its length. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    const now = Date.now();
    const due = [...this.active.values()].filter((e) => !e.lost && now - e.renewedAt >= e.leaseLen / 2);
    if (due.length === 0) return;
    this.beating = true;
    try {
      const ok = await this.queue.touchMany(due.map((e) => e.lease));
      due.forEach((e, i) => {
        if (ok[i]) e.renewedAt = now;
        else this.markLost(e);
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

  private closing: Promise<void> | undefined;

  private async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.blocker) this.queue.closeBlocker(this.blocker); // interrupts a blocking wait
    this.wakeLoop?.();
    await this.loopDone;
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, drainTimeoutMs);
        this.idle = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.idle = undefined;
    }
    const unfinished = [...this.active.values()].filter((e) => !e.finished && !e.lost);
    for (const e of unfinished) {
      e.lost = true; // its late outcome must not be settled
      e.abort.abort(new Error('worker is shutting down; the job was given back to the queue'));
    }
    const batch = this.takeOutbox();
    const items = [...batch.map((o) => o.item), ...unfinished.map((e) => requeueItem(e.lease, 0, 'shutdown'))];
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
    this.active.clear();
    this.started = false;
    this.subject.complete();
  }
}

export { errorText };
