import { DEFAULT_CONCURRENCY } from '../defaults.js';
import { startAttemptTimer } from './attempt-timeout.js';
import { IdleLanes } from './idle-lanes.js';
import { instruments, jobOutcome, observeProcess, type ProcessScope } from '../instrumentation/index.js';
import { HeldLease, JobView, type Job } from './job-view.js';
import { LeaseWorker } from './lease-worker.js';
import { ErrorBackoff } from './retry-delay.js';
import { failureOutcome, successOutcome, thrownOutcome, type Outcome } from './outbox.js';
import { untilDue } from '../leases/leasing.js';
import type { LeaseStep } from '../leases/lease-step.js';
import type { Queue } from '../queue/queue.js';
import type { PartitionedQueue } from '../partitions/partitioned-queue.js';
import { requeueItem } from '../settles/settle-items.js';
import type { Lease } from '../leases/types.js';
import { assertOptions } from '../validate.js';
import { assertConcurrency } from './loop-options.js';
import type { BackoffStrategies } from './backoff-strategies.js';
import { ValidationError } from '../errors.js';
import { assertSandboxOptions, handlerFileUrl, sandboxSettings, type HandlerFile, type SandboxOptions } from './sandbox/options.js';
import { SandboxPool } from './sandbox/pool.js';

export type { Job } from './job-view.js';
export type { ActivityEvent, OutcomeEvent, WorkerEvent } from './outbox.js';
export type { BackoffStrategies, BackoffStrategy } from './backoff-strategies.js';
export type { HandlerFile, SandboxOptions } from './sandbox/options.js';

export type Handler<Data, Result> = (job: Job<Data>) => Promise<Result> | Result;

export interface WorkerOptions<Data = unknown> {
  /** Jobs run at once (1 to 1000). Default 1. Can be changed while the worker runs (`worker.concurrency = n`). */
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
  /** The name `queue.getWorkers()` shows for this worker (e.g. the service it belongs to). */
  appName?: string;
  /**
   * How long `queue.getWorkers()` lists this worker after it was last seen (1 s or more).
   * Default 60 s. An idle worker waits at most a fifth of it at a time (docs/observability.md).
   */
  workerTtlMs?: number;
  /**
   * Backoff strategies by name, for jobs whose backoff is `{ type: 'custom', strategy }`: after
   * a failed attempt the strategy chooses the delay of its retry, or 'dead' (docs/handlers.md).
   */
  backoffStrategies?: BackoffStrategies<Data>;
  /**
   * For a handler file: where it runs (worker threads by default, or child processes) and
   * the bounds of its children (docs/sandbox.md).
   */
  sandbox?: SandboxOptions;
}

const WORKER_OPTION_KEYS = ['concurrency', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart', 'backoffStrategies', 'sandbox', 'appName', 'workerTtlMs'] as const;
/**
 * An idle wait that times out without a wake-up token means nothing was added, so the loop
 * waits again without leasing; it leases anyway this often, for what a wake-up does not
 * announce: delayed jobs due, leases expired, and a token lost with a consumer that died
 * (which the sweeper makes up for sooner).
 */
const SAFETY_LEASE_MS = 30_000;
/** From this concurrency on, two lease calls may be in flight: Redis and Node overlap. */
const TWO_LANES_FROM = 4;

/**
 * The lease loop: keeps up to `concurrency` handlers busy, settles finished jobs and
 * leases the next ones in the same script call, heartbeats running jobs in one batch
 * call, waits on an empty queue without polling, and survives Redis restarts.
 */
export class Worker<Data = unknown, Result = unknown> extends LeaseWorker<Data, Result> {
  private limit: number;
  private lanes = 0;
  /** Most slots one lease call asks for. */
  private laneCap = 0;
  private readonly held = new Map<string, HeldLease<Data>>();
  private running = 0;
  /** Slots promised to lease calls in flight. */
  private requested = 0;
  /** Lanes waiting on an empty queue (one on Redis, the others on that one). */
  private idleLanes = 0;
  private readonly turns = new IdleLanes();
  private slotWaiters: Array<() => void> = [];
  private flushing: Promise<void> | undefined;
  private lastLeaseAt = 0;
  private readonly handler: Handler<Data, Result>;
  /** The children of a handler file (docs/sandbox.md). */
  private readonly sandbox: SandboxPool<Data, Result> | undefined;

  /**
   * `handler` runs each job in this process; a handler file (a module exporting the handler)
   * runs them in worker threads or child processes (`options.sandbox`, docs/sandbox.md).
   */
  constructor(queue: Queue<Data, Result> | PartitionedQueue<Data, Result>, handler: Handler<Data, Result> | HandlerFile, options: WorkerOptions<Data> = {}) {
    assertOptions('worker options', options, WORKER_OPTION_KEYS);
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    assertConcurrency('concurrency', concurrency);
    super(queue, options);
    this.limit = concurrency;
    if (typeof handler === 'function') {
      if (options.sandbox !== undefined) throw new ValidationError('sandbox', 'applies to a handler file (a file: URL or an absolute path), not to a function');
      this.handler = handler;
    } else {
      const file = handlerFileUrl('handler', handler);
      if (options.sandbox !== undefined) assertSandboxOptions('sandbox', options.sandbox);
      this.sandbox = new SandboxPool<Data, Result>(sandboxSettings(file, options.sandbox ?? {}), () => this.limit);
      this.handler = this.sandbox.run;
    }
    if (options.autostart ?? true) this.start();
  }

  /** Jobs run at once. */
  get concurrency(): number {
    return this.limit;
  }

  /**
   * Changes it at once, checked as the option (ValidationError: nothing changes). Raised:
   * lanes waiting for a slot lease now. Lowered: running handlers finish, and no lane leases
   * until fewer than `n` run (jobs leased by a call already in flight still run).
   */
  set concurrency(n: number) {
    assertConcurrency('concurrency', n);
    this.limit = n;
    if (!this.started || this.stopping) return; // start() sets the lanes
    if (this.lanes === 1 && n >= TWO_LANES_FROM) {
      this.lanes = 2;
      this.loopDone = Promise.all([this.loopDone, this.loop()]);
    }
    this.laneCap = Math.ceil(n / this.lanes);
    this.notifySlots();
  }

  /** Jobs whose handler is running now. */
  override get inFlight(): number {
    return this.running;
  }

  protected override runLoop(): Promise<unknown> {
    this.lanes = this.limit >= TWO_LANES_FROM ? 2 : 1;
    // Each lane leases at most its share, so one lane's script runs in Redis while Node
    // runs the other lane's jobs; one lane taking every free slot would serialise them.
    this.laneCap = Math.ceil(this.limit / this.lanes);
    const done = Promise.all(Array.from({ length: this.lanes }, () => this.loop()));
    this.heartbeat.schedule();
    return done;
  }

  // ---- the loop --------------------------------------------------------------

  private async loop(): Promise<void> {
    let woken = false;
    const errors = new ErrorBackoff();
    while (!this.stopping) {
      if (this.paused) {
        await this.park();
        continue;
      }
      const free = Math.min(this.laneCap, this.limit - this.running - this.requested);
      if (free <= 0) {
        await this.waitForSlot();
        continue;
      }
      let step: LeaseStep<Data> | undefined;
      this.requested += free;
      try {
        step = await this.leaseAndSettle(free, woken, errors);
      } finally {
        this.requested -= free;
      }
      if (!step) {
        woken = true;
        continue;
      }
      if ((step.closed || step.deleted) && step.leases.length === 0 && !this.stopping) {
        this.queueEnded(step.deleted);
        break;
      }
      if ((this.stopping || step.leases.length > free) && (await this.giveBackSurplus(step, free)) === 'all') break;
      woken = false;
      if (!this.startLeased(step, free)) {
        this.notifySlots(); // the unused part of the reservation is free for the other lane
        // Fewer jobs than free slots: the queue is drained (or paused) for now.
        if (this.outbox.length === 0) woken = await this.idle(step);
      }
    }
  }

  /**
   * Leases a call brought that this worker gives straight back: all of them while stopping,
   * else those beyond the `free` slots it asked for (a retried request may bring back the
   * leases its first try got for another lane's larger count).
   */
  private async giveBackSurplus(step: LeaseStep<Data>, free: number): Promise<'all' | 'some'> {
    const stopping = this.stopping;
    const surplus = stopping ? step.leases.splice(0) : step.leases.splice(free);
    if (surplus.length) {
      await this.q.settle(surplus.map((l) => requeueItem(l, 0, stopping ? 'shutdown' : 'over capacity'))).catch(() => undefined);
    }
    return stopping ? 'all' : 'some';
  }

  /**
   * Runs the jobs of a lease call that asked for `free` slots; true when they fill them all.
   * Synchronous: a handler that ends at once finds its lane's state as the call left it.
   */
  private startLeased(step: LeaseStep<Data>, free: number): boolean {
    this.lastLeaseAt = this.lastActivityAt;
    this.noteLeased(step, free);
    for (const lease of step.leases) this.run(lease);
    if (step.leases.length < free) return false;
    // Every slot asked for was filled: more may be waiting, so the lanes idling behind this
    // call lease too. (Waking them on every wake-up would add an empty lease call.)
    this.turns.releaseAll();
    return true;
  }

  /**
   * Waits for work: one lane blocks on Redis, any other waits until that one leases every
   * slot it asked for (or the worker stops).
   */
  private async idle(step: LeaseStep<Data>): Promise<boolean> {
    this.idleLanes += 1;
    if (this.outbox.length) this.flushSoon(); // finished while we decided to wait
    try {
      const due = step.paused ? undefined : untilDue(step); // paused: no lease promotes a due job
      return await this.turns.turn(async () => {
        let ms = Math.min(this.blockMs, due ?? this.blockMs);
        for (;;) {
          const woken = await this.block(ms);
          const timedOutIdle =
            !woken && !this.stopping && !this.paused && step.nextDue === undefined && this.outbox.length === 0;
          // the lease also keeps the worker listed (lib/core/workers/presence.ts)
          if (!timedOutIdle || Date.now() - this.lastLeaseAt >= SAFETY_LEASE_MS || this.presence.idleDue()) return woken;
          ms = this.blockMs;
        }
      }, false, due);
    } finally {
      this.idleLanes -= 1;
      if (this.stopping) this.turns.releaseAll();
    }
  }

  /** Paused: the lane counts as idle (finished jobs settle on their own) until resume(). */
  private async park(): Promise<void> {
    this.idleLanes += 1;
    if (this.outbox.length) this.flushSoon();
    try {
      await this.parked();
    } finally {
      this.idleLanes -= 1;
    }
  }

  protected override wakeLanes(): void {
    this.notifySlots();
    this.turns.releaseAll();
  }

  protected override leasingStopped(): boolean {
    return this.parkedLanes === this.lanes;
  }

  private waitForSlot(): Promise<void> {
    return new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private notifySlots(): void {
    for (const resolve of this.slotWaiters.splice(0)) resolve();
  }

  /** A finished handler or a shutdown also ends an error pause. */
  protected override keepPauseWaker(wake: () => void): void {
    this.slotWaiters.push(wake);
  }

  // ---- running handlers ------------------------------------------------------

  private run(lease: Lease<Data>): void {
    const held = new HeldLease(lease);
    this.held.set(lease.token, held);
    this.running += 1;
    if (held.leaseLen < this.leaseMs) this.heartbeat.schedule();
    // Registered instruments (relq/metrics, relq/tracing) see the run; none: one length check.
    const observed = instruments.length ? observeProcess(this.q.name, [lease.job]) : undefined;
    held.observed = observed;
    held.stopTimer = startAttemptTimer(held, (error) => this.end(held, failureOutcome(held, error, false)));
    const job = new JobView(held, this.jobCalls);
    this.jobStarted(job);
    let promise: Promise<Result>;
    try {
      promise = Promise.resolve(observed ? observed.run(() => this.handler(job)) : this.handler(job));
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.end(held, successOutcome(held, result, this.q.maxPayloadBytes)),
      (error: unknown) => this.end(held, thrownOutcome(held, error)),
    );
  }

  /**
   * The attempt ends once, at whichever comes first: the handler's outcome, its timeout, or
   * the loss of its lease. The last two free the slot at once: the handler's signal aborts,
   * and one that ignores it runs on with its late outcome dropped.
   */
  private end(held: HeldLease<Data>, outcome: Outcome<Data, Result> | undefined): void {
    if (held.finished) return;
    held.stopTimer?.();
    if (held.moved) outcome = undefined; // its handler moved the job to the delayed set: nothing to settle
    // a failed attempt: its job's backoff strategy may choose its delay (a success pays one comparison)
    this.finish(held, outcome?.item[0] === 'n' ? this.backoff.apply(outcome) : outcome, held.observed);
  }

  protected override abandon(held: HeldLease<Data>): void {
    this.end(held, undefined);
  }

  /** Ends an attempt: its slot is free, and its outcome (none for a lost lease) goes to the outbox. */
  private finish(held: HeldLease<Data>, outcome: Outcome<Data, Result> | undefined, observed?: ProcessScope): void {
    held.finished = true;
    observed?.end([jobOutcome(outcome?.event, held)]);
    this.running -= 1;
    if (held.lost || !outcome) {
      this.held.delete(held.lease.token);
    } else {
      this.outbox.push(outcome);
      // While stopping no lane leases again: settle now (a give-back must not wait for the drain).
      if (this.settlesAlone()) this.flushSoon();
    }
    // A lane waiting for a slot leases now (folding the settle into that call).
    if (this.slotWaiters.length) this.notifySlots();
    if (this.running === 0) this.handlersFinished();
  }

  protected override heldLeases(): Iterable<HeldLease<Data>> {
    return this.held.values();
  }

  protected override keepBeating(): boolean {
    return this.started && this.held.size + this.running + (this.stopping ? 0 : 1) > 0;
  }

  // ---- settling --------------------------------------------------------------

  protected override reportSettled(o: Outcome<Data, Result>, settled: boolean): void {
    this.held.delete(o.held.lease.token);
    this.emitOutcome(o, settled);
  }

  /** Settles the outbox on its own when no lane can fold it into a lease call. */
  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      const errors = new ErrorBackoff();
      while (this.outbox.length > 0 && (this.idleLanes === this.lanes || this.stopping)) {
        // A grouped job's settle may free its group's slot: the same call leases what that
        // lets in (one call per job for a group at its limit, no wake-up and second call).
        const free = this.stopping ? 0 : Math.min(this.laneCap, this.limit - this.running - this.requested);
        if (free > 0 && this.outbox.grouped) {
          this.requested += free;
          let step: LeaseStep<Data> | undefined;
          try {
            step = await this.leaseAndSettle(free, false, errors);
          } finally {
            this.requested -= free;
          }
          let filled = false;
          if (step && !((this.stopping || step.leases.length > free) && (await this.giveBackSurplus(step, free)) === 'all')) {
            filled = this.startLeased(step, free);
          }
          // The unused part of the reservation is free again: a lane that woke meanwhile and
          // found every slot reserved waits for a slot, and no handler may end to give it one.
          if (!filled) this.notifySlots();
          continue;
        }
        const call = this.outbox.take();
        try {
          await this.sendSettle(call);
          errors.reset();
        } catch (error) {
          this.outbox.putBack(call);
          if (this.stopping && this.q.isClosed) return;
          this.subject.next({ type: 'error', error });
          await new Promise((r) => setTimeout(r, errors.next()));
        }
      }
    })().finally(() => {
      this.flushing = undefined;
      // An outcome that came as the last call ended found the flush still on (the jobs a
      // flush leased end at any time): it is settled now, not left until the next lease.
      if (this.outbox.length > 0 && this.settlesAlone() && !this.q.isClosed) this.flushSoon();
    });
  }

  /** No lane can fold a settle into a lease call soon: all idle (none waits for a slot), or stopping. */
  private settlesAlone(): boolean {
    return this.stopping || (this.idleLanes === this.lanes && !this.slotWaiters.length);
  }

  // ---- stopping --------------------------------------------------------------

  protected override async shutdown(drainTimeoutMs: number): Promise<void> {
    if (this.blocker) this.q.closeBlocker(this.blocker); // interrupts a blocking wait
    this.notifySlots();
    this.turns.releaseAll();
    await this.loopDone;
    if (this.running > 0) await this.drainHandlers(drainTimeoutMs);
    const unfinished = [...this.held.values()].filter((h) => !h.finished && h.live);
    for (const h of unfinished) h.giveBack();
    await this.settleLast(unfinished);
    await this.flushing;
    this.held.clear();
    await this.sandbox?.close();
    await this.leave();
    this.ended();
  }
}
