import { withDeadline } from '../deadline.js';
import { Subject, type Observable } from 'rxjs';
import { DEFAULT_BLOCK_MS, DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_LEASE_MS, DEFAULT_WORKER_TTL_MS } from '../defaults.js';
import { CancelledError, ClosedError, LeaseLostError, NotReplicatedError, QueueDeletedError, UnrecoverableError, ValidationError } from '../errors.js';
import type { CancelNotice } from './cancel-notices.js';
import { Heartbeat } from './heartbeat.js';
import { ErrorBackoff, wakeableDelay } from './retry-delay.js';
import type { HeldLease, JobCalls, MovedTo } from './job-view.js';
import { Outbox, type ActivityEvent, type Outcome, type OutcomeEvent, type SettleCall } from './outbox.js';
import { internalsOf, type QueueInternals, type WorkWait } from '../queue/internals.js';
import type { LeaseStep } from '../leases/lease-step.js';
import type { Queue } from '../queue/queue.js';
import type { PartitionedQueue } from '../partitions/partitioned-queue.js';
import { delayItem, requeueItem, waitChildrenItem, type SettleItem } from '../settles/settle-items.js';
import type { Lease, LeasedJob } from '../leases/types.js';
import { assertLoopOptions, type LoopOptions } from './loop-options.js';
import { checkBackoffStrategies, StrategyBackoff, type BackoffStrategies } from './backoff-strategies.js';
import { assertBoolean, assertOptions } from '../validate.js';
import { Presence } from '../workers/presence.js';


/** Longest a closing worker waits to remove its entry from the live workers (it expires anyway). */
const LEAVE_WAIT_MS = 250;
/** Options every lease loop has (Worker and BatchWorker document them). */
export type LeaseWorkerOptions<Data> = LoopOptions & { backoffStrategies?: BackoffStrategies<Data> };

/** `worker.pause(options)`. */
export interface PauseOptions {
  /** Also wait until the running handlers have finished and their outcomes are settled. Default false. */
  drain?: boolean;
}

const PAUSE_OPTION_KEYS = ['drain'] as const;

/** The check of pause()'s options (also the Nest registry's, before it pauses anything). */
export function assertPauseOptions(opts: PauseOptions): void {
  assertOptions('pause options', opts, PAUSE_OPTION_KEYS);
  if (opts.drain !== undefined) assertBoolean('drain', opts.drain);
}

/**
 * What Worker and BatchWorker share: options, start / close, events, the lease call that
 * settles the outbox, the blocking wait, the error pause, the heartbeat, the end of the
 * queue, and the last settle at shutdown. Each subclass runs its own loop and handlers.
 */
export abstract class LeaseWorker<Data, Result> {
  readonly leaseMs: number;
  protected readonly blockMs: number;
  protected readonly drainTimeoutMs: number;
  protected readonly subject = new Subject<OutcomeEvent<Data, Result>>();
  /** A subject of its own: its events are built only while someone observes it (none on the hot path otherwise). */
  private readonly activitySubject = new Subject<ActivityEvent<Data>>();
  protected readonly heartbeat: Heartbeat<Data>;
  protected readonly outbox: Outbox<Data, Result>;
  protected started = false;
  protected stopping = false;
  protected blocker: WorkWait | undefined;
  protected loopDone: Promise<unknown> | undefined;
  private closing: Promise<void> | undefined;
  /** Ends the subscription to cancel notices (lib/core/worker/cancel-notices.ts). */
  private stopCancels: (() => void) | undefined;
  private handlersDone: (() => void) | undefined;
  private blocking: Promise<boolean> | undefined;
  /** 'drained' was reported, and no job leased since. */
  private drainedReported = false;
  /** pause() was called, and no resume() since: no lane leases. */
  protected paused = false;
  /** Lanes waiting for resume() (parked()). */
  protected parkedLanes = 0;
  private resumeWakers: Array<() => void> = [];
  private pauseWaiters: Array<{ drain: boolean; done: () => void }> = [];
  /** Settle calls of their own in flight (sendSettle). */
  private settling = 0;
  /** Last time the loop made progress or began a healthy wait (for health checks). */
  lastActivityAt = 0;
  /** What the loop uses of its Queue beyond the public API (lib/core/queue/internals.ts). */
  protected readonly q: QueueInternals<Data>;
  /** What each JobView calls for its lease. */
  protected readonly jobCalls: JobCalls<Data>;
  /** The backoff strategies of this worker, applied to its failed attempts. */
  protected readonly backoff: StrategyBackoff<Data>;
  /** Its registration as a live worker of the queue (queue.getWorkers()), carried by its calls. */
  protected readonly presence: Presence;

  protected constructor(
    readonly queue: Queue<Data, Result> | PartitionedQueue<Data, Result>,
    options: LeaseWorkerOptions<Data>,
  ) {
    const internals = internalsOf<Data>(queue);
    if (!internals) throw new ValidationError('queue', 'must be a relq Queue');
    this.q = internals;
    if (queue.isClosed) throw new ClosedError(`queue '${queue.name}' (a worker needs an open Queue object)`);
    assertLoopOptions(options);
    if (options.backoffStrategies !== undefined) checkBackoffStrategies('backoffStrategies', options.backoffStrategies);
    const name = queue.name;
    this.backoff = new StrategyBackoff<Data>(options.backoffStrategies ?? {}, (message) =>
      internals.warn({ code: 'RELQ_BACKOFF_STRATEGY', queue: name, message: `queue '${name}': ${message}` }),
    );
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.blockMs = options.blockMs ?? DEFAULT_BLOCK_MS;
    this.drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.presence = new Presence(options.workerTtlMs ?? DEFAULT_WORKER_TTL_MS, () => ({ concurrency: this.concurrency, running: this.inFlight }), options.appName);
    const touchMany = (leases: ReadonlyArray<Lease<Data>>, extendMs?: number, worker?: string) => internals.touchMany(leases, extendMs, worker);
    this.heartbeat = new Heartbeat<Data>(touchMany, this.leaseMs, options.heartbeat ?? true, this.presence, {
      held: () => this.heldLeases(),
      lost: (held, cancelled) => this.leaseLost(held, cancelled ? new CancelledError(held.lease.job.id, cancelled.cancelled) : undefined),
      error: (error) => this.subject.next({ type: 'error', error }),
      more: () => this.keepBeating(),
    });
    this.outbox = new Outbox<Data, Result>((outcome, settled) => this.reportSettled(outcome, settled));
    this.jobCalls = {
      touch: this.heartbeat.touch,
      updateProgress: (lease, progress) => {
        const stored = internals.updateProgress(lease, progress);
        if (!this.activitySubject.observed) return stored;
        return stored.then((ok) => {
          if (ok) this.activitySubject.next({ type: 'progress', job: lease.job, progress });
          return ok;
        });
      },
      childrenResults: (id) => internals.childrenResults(id),
      log: (lease, line) => internals.log(lease, line),
      updateData: (lease, data) => internals.updateData(lease, data),
      delay: async (held, when) => this.moveOut(held, delayItem(held.lease, when), 'delayed'), // a bad time throws before anything changes
      waitForChildren: async (held) => this.moveOut(held, waitChildrenItem(held.lease), 'waiting-children'),
      addChildren: (held, children, opts) => {
        if (held.finished || held.timedOut || !held.live) return Promise.reject(new LeaseLostError(held.lease.job.id));
        return internals.addChildren(held.lease, children, opts);
      },
    };
  }

  /** Jobs whose handler is running now. */
  abstract get inFlight(): number;
  /** Jobs (Worker) or batches (BatchWorker) run at once. */
  abstract get concurrency(): number;

  /** Per-job outcomes of this process's handlers, plus loop errors and 'stopped'. */
  get events(): Observable<OutcomeEvent<Data, Result>> {
    return this.subject.asObservable();
  }

  /**
   * 'active' (a handler started a job) and 'progress' (its progress was stored). Apart from
   * `events` because they are built per running job, and only while someone subscribes here.
   */
  get activity(): Observable<ActivityEvent<Data>> {
    return this.activitySubject.asObservable();
  }

  get isRunning(): boolean {
    return this.started && !this.stopping;
  }

  /** pause() was called and resume() not since. */
  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * This worker leases no more jobs until resume(); the queue and its other workers go on
   * (`queue.pause()` pauses every worker). Running handlers go on, heartbeated, and their
   * outcomes are settled. Resolves once no lease call of this worker is in flight and none
   * will start (jobs leased by the last call are running); with `drain: true`, once its
   * running handlers have finished too and their outcomes are settled. Also resolves on
   * resume() or close(). Also before start(): the worker starts paused.
   */
  pause(opts: PauseOptions = {}): Promise<void> {
    assertPauseOptions(opts);
    if (!this.paused) {
      this.paused = true;
      this.blocker?.interrupt(); // a token it took would wait for the resume: leave them to others
      this.wakeLanes();
    }
    return new Promise<void>((done) => {
      this.pauseWaiters.push({ drain: opts.drain ?? false, done });
      this.checkPaused();
    });
  }

  /** Leases again after pause(), at once. A no-op when not paused. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.endPause();
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.blocker = this.q.openBlocker();
    // once active (again), a touch finds the leases cancelled while no notice could come
    this.stopCancels = this.q.watchCancels(
      (notice) => this.cancelNotice(notice),
      () => this.heartbeat.beatAll(),
    );
    this.lastActivityAt = Date.now();
    this.loopDone = this.runLoop();
  }

  /**
   * Stops leasing, lets running handlers finish for up to `drainTimeoutMs`, then gives the
   * unfinished jobs back to pending at once (no failed attempt) and aborts their signals.
   * Idempotent.
   */
  async close(opts: { drainTimeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    if (this.stopping) return this.closing;
    this.stopping = true;
    this.endPause(); // parked lanes end
    this.closing = this.shutdown(opts.drainTimeoutMs ?? this.drainTimeoutMs);
    return this.closing;
  }

  // ---- what each worker does its own way ---------------------------------------

  /**
   * pause(): moves every lane to a point where it does not lease (a parked lane, a batch
   * running, a lease call in flight comes back), and ends error pauses.
   */
  protected abstract wakeLanes(): void;
  /** Paused: no lane leases now, and none will before resume(). */
  protected abstract leasingStopped(): boolean;
  /** Starts the loop(s); resolves when they end. */
  protected abstract runLoop(): Promise<unknown>;
  /** Stops the loop(s), drains the handlers, gives back what is unfinished, then `ended()`. */
  protected abstract shutdown(drainTimeoutMs: number): Promise<void>;
  /** The leases the heartbeat covers. */
  protected abstract heldLeases(): Iterable<HeldLease<Data>>;
  /** Whether the heartbeat ticks again. */
  protected abstract keepBeating(): boolean;
  /** A settle call answered for `outcome`: `settled`, or false when its lease was already lost. */
  protected abstract reportSettled(outcome: Outcome<Data, Result>, settled: boolean): void;

  /**
   * The events of a settled outcome, after its settle answered (the same point for Worker
   * and BatchWorker): a last attempt's failure is also reported as 'failed' before its
   * 'dead'; an outcome whose lease was already lost is reported 'lost'.
   */
  protected emitOutcome(o: Outcome<Data, Result>, settled: boolean): void {
    if (!settled) {
      const { job } = o.held.lease;
      this.subject.next(o.held.cancelled ? { type: 'cancelled', job, error: o.held.cancelled } : { type: 'lost', job });
      return;
    }
    const ev = o.event;
    if (!ev) return; // given back unstarted: nothing happened to the job
    if (ev.type === 'dead' && !(ev.error instanceof UnrecoverableError)) {
      this.subject.next({ type: 'failed', job: ev.job, error: ev.error, willRetry: false });
    }
    this.subject.next(ev);
  }
  /** A handler is about to start `job`. */
  protected jobStarted(job: LeasedJob<Data>): void {
    if (this.activitySubject.observed) this.activitySubject.next({ type: 'active', job });
  }

  /** Keeps the waker of an error pause, so that it can be cut short. */
  protected abstract keepPauseWaker(wake: () => void): void;

  /**
   * A touch found the lease gone, or cancel() ended it (`cancelled`): reported now, its signal
   * aborted, and the attempt given up on (its slot free). An attempt that already ended has
   * its outcome on the way: the settle's answer reports it (a heartbeat racing a successful
   * ack would otherwise call a completed job lost).
   */
  private leaseLost(held: HeldLease<Data>, cancelled?: CancelledError): void {
    if (held.lost) return;
    if (cancelled) held.cancelled = cancelled;
    if (held.finished || held.moved || !held.markLost(cancelled)) return;
    const { job } = held.lease;
    this.subject.next(cancelled ? { type: 'cancelled', job, error: cancelled } : { type: 'lost', job });
    this.abandon(held);
  }

  /** cancel() ended a lease: this worker's, if it holds that token. Rare: a scan of the held leases. */
  private cancelNotice(notice: CancelNotice): void {
    for (const held of this.heldLeases()) {
      if (held.lease.token === notice.token) return this.leaseLost(held, new CancelledError(notice.id, notice.reason));
    }
  }

  /**
   * A step job's handler ends its lease itself (job.moveToDelayed, snooze, waitForChildren):
   * one settle of its own, now. Marked moved before the call, so that a heartbeat that finds
   * the lease gone meanwhile does not report it lost; once moved, the attempt's outcome is
   * dropped (Worker's end(), BatchWorker's runBatch()).
   */
  private async moveOut(held: HeldLease<Data>, item: SettleItem, to: MovedTo): Promise<boolean> {
    if (held.finished || held.timedOut || !held.live) return false; // the attempt ended already
    held.moved = to;
    try {
      const [moved] = await this.q.settle([item]);
      if (moved !== true) held.moved = false;
    } catch (error) {
      // applied, short of the replicas asked for: moved all the same, and the handler hears why
      if (!(error instanceof NotReplicatedError && (error.result as boolean[])[0] === true)) held.moved = false;
      throw error;
    }
    return held.moved !== false;
  }

  /** Gives up on the attempt of a lease that was lost: its slot is free (its handler may run on). */
  protected abstract abandon(held: HeldLease<Data>): void;

  // ---- shared steps ---------------------------------------------------------------

  /**
   * One lease call that also settles the outbox. When it fails, the outcomes stay in the
   * outbox, the error is reported, and after a pause (growing with `errors`) the result is
   * undefined.
   */
  protected async leaseAndSettle(count: number, woken: boolean, errors: ErrorBackoff): Promise<LeaseStep<Data> | undefined> {
    const call = this.outbox.take();
    let step: LeaseStep<Data>;
    try {
      step = await this.q.leaseStep(call.batch.map((o) => o.item), count, this.leaseMs, woken, call.reqId, this.presence.due());
    } catch (error) {
      this.outbox.putBack(call);
      if (this.q.isClosed) this.queueObjectClosed();
      else await this.pauseAfterError(error, errors);
      return undefined;
    }
    errors.reset();
    this.lastActivityAt = Date.now();
    this.outbox.settled(call.batch, step.settled);
    if (step.notReplicated) this.subject.next({ type: 'error', error: step.notReplicated });
    return step;
  }

  /**
   * After a lease call that asked for `asked` jobs: one that got fewer (not paused) found the
   * queue drained for now, reported once until the worker leases again. Nothing is read from
   * Redis for it.
   */
  protected noteLeased(step: LeaseStep<Data>, asked: number): void {
    if (step.leases.length > 0) this.drainedReported = false;
    if (step.leases.length < asked && !step.paused && !this.drainedReported) {
      this.drainedReported = true;
      this.subject.next({ type: 'drained' });
    }
  }

  /**
   * A settle call of its own for `call` (plus `extra` items after its outcomes). Settles that
   * were applied but not confirmed by enough replicas (durability) count as applied; the
   * shortfall is reported. Throws when the call failed.
   */
  protected async sendSettle(call: SettleCall<Data, Result>, extra: SettleItem[] = []): Promise<void> {
    const items = [...call.batch.map((o) => o.item), ...extra];
    if (items.length === 0) return;
    let answers: boolean[];
    this.settling += 1;
    try {
      answers = await this.q.settle(items, call.reqId);
    } catch (error) {
      if (!(error instanceof NotReplicatedError)) throw error;
      answers = error.result as boolean[];
      this.subject.next({ type: 'error', error });
    } finally {
      this.settling -= 1;
    }
    this.outbox.settled(call.batch, answers.slice(0, call.batch.length));
    this.checkPaused(); // pause({ drain: true }) waits for the outcomes settled
  }

  /**
   * Waits for a wake-up token for up to `ms`; true when woken (or after an error), false at
   * once while paused. The
   * blocking connection serves one wait at a time, so callers that arrive during a wait
   * share it.
   */
  protected block(ms: number): Promise<boolean> {
    if (this.paused) return Promise.resolve(false); // pause() cut the wait: none starts until resume()
    this.lastActivityAt = Date.now();
    // short enough that an idle worker leases (registering) well within its ttl
    this.blocking ??= this.blockOnce(Math.min(ms, this.presence.maxWaitMs)).finally(() => (this.blocking = undefined));
    return this.blocking;
  }

  private async blockOnce(ms: number): Promise<boolean> {
    try {
      return await this.q.waitForWork(this.blocker!, ms);
    } catch (error) {
      if (this.q.isClosed) this.queueObjectClosed();
      else await this.pauseAfterError(error);
      return true;
    }
  }

  /** The Queue object was closed under a running worker: nothing can be leased or settled any more. */
  private queueObjectClosed(): void {
    if (this.stopping) return;
    this.subject.next({ type: 'stopped', reason: 'queue object closed' });
    void this.close({ drainTimeoutMs: 0 }).catch(() => undefined);
  }

  /** Reports a loop error and pauses (not while stopping). */
  protected async pauseAfterError(error: unknown, errors = new ErrorBackoff()): Promise<void> {
    if (this.stopping) return;
    this.subject.next({ type: 'error', error });
    await wakeableDelay(errors.next(), (wake) => this.keepPauseWaker(wake));
  }

  /** The queue was closed and is drained (closeQueue), or deleted: this worker stops. */
  protected queueEnded(deleted: boolean): void {
    if (this.stopping) return; // another lane saw it first
    if (deleted) this.subject.next({ type: 'error', error: new QueueDeletedError(this.q.name) });
    this.subject.next({ type: 'stopped', reason: deleted ? 'queue deleted' : 'queue closed' });
    void this.close().catch(() => undefined);
  }

  // ---- pause ------------------------------------------------------------------------

  /** A paused lane waits here for resume() or close(). */
  protected async parked(): Promise<void> {
    this.parkedLanes += 1;
    this.lastActivityAt = Date.now(); // a healthy wait
    this.heartbeat.schedule(); // it keeps a paused worker listed (lib/core/workers/presence.ts)
    this.checkPaused();
    await new Promise<void>((wake) => this.resumeWakers.push(wake));
    this.parkedLanes -= 1;
  }

  /** Resolves the pause() calls whose condition holds now. */
  protected checkPaused(): void {
    if (this.pauseWaiters.length === 0) return;
    if (this.started && !this.stopping && !this.leasingStopped()) return;
    const drained = !this.started || (this.inFlight === 0 && this.outbox.length === 0 && this.settling === 0);
    this.pauseWaiters = this.pauseWaiters.filter((w) => {
      if (w.drain && !drained) return true;
      w.done();
      return false;
    });
  }

  /** resume() or close(): parked lanes go on, and pending pause() calls resolve. */
  private endPause(): void {
    for (const wake of this.resumeWakers.splice(0)) wake();
    for (const w of this.pauseWaiters.splice(0)) w.done();
  }

  /** Shutdown: waits up to `ms` for `handlersFinished()`. */
  protected async drainHandlers(ms: number): Promise<void> {
    await wakeableDelay(ms, (wake) => (this.handlersDone = wake));
    this.handlersDone = undefined;
  }

  /** The running handlers have all finished (ends a shutdown's drain wait). */
  protected handlersFinished(): void {
    this.handlersDone?.();
    this.checkPaused();
  }

  /**
   * Shutdown: settles the outbox and gives `unfinished` back to pending: requests that
   * failed are sent once more as they were, the rest in one call with the give-backs.
   */
  protected async settleLast(unfinished: Array<HeldLease<Data>>): Promise<void> {
    const calls = this.outbox.drain();
    for (const [i, call] of calls.entries()) {
      const last = i === calls.length - 1;
      try {
        await this.sendSettle(call, last ? unfinished.map((h) => requeueItem(h.lease, 0, 'shutdown')) : []);
      } catch (error) {
        this.subject.next({ type: 'error', error });
      }
    }
  }

  /**
   * Shutdown: removes this worker's entry from the queue's live workers. It would expire
   * anyway, so a close never waits long for it (Redis may be away: its reply could take the
   * whole command timeout).
   */
  protected async leave(): Promise<void> {
    const arg = this.presence.leave();
    if (arg === '' || this.q.isClosed) return;
    await withDeadline(this.q.touchMany([], undefined, arg), LEAVE_WAIT_MS, 'leave').catch(() => undefined);
  }

  /** The end of a shutdown. */
  protected ended(): void {
    this.heartbeat.stop();
    this.stopCancels?.();
    this.stopCancels = undefined;
    this.started = false;
    this.subject.complete();
    this.activitySubject.complete();
  }
}
