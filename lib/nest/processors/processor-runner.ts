import type { Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { QueueInUseError, RelqError } from '../../core/errors.js';
import type { AppQueue } from '../queues/app-queue.js';
import { BatchWorker } from '../../core/worker/batch-worker.js';
import { Worker, type WorkerEvent } from '../../core/worker/worker.js';
import type { PauseOptions } from '../../core/worker/lease-worker.js';
import { assertConcurrency } from '../../core/worker/loop-options.js';
import type { ProcessorDefinition } from './processor-definition.js';
import * as msg from '../relq.messages.js';
import { BatchRouter } from './batch-router.js';
import { EventMethodCalls } from '../events/event-method-calls.js';
import { HandlerRouter, type HandlerStatus } from './handler-router.js';

/** How a lease loop is doing, for status pages and the health check. */
export interface ProcessorStatus {
  processor: string;
  queue: string;
  /**
   * - `stopped`: not started (workers disabled, or stopped via QueueRegistry)
   * - `idle`: waiting for jobs (blocked on Redis, no polling)
   * - `working`: running handlers, with free slots
   * - `busy`: every slot taken
   * - `erroring`: its last Redis call failed; it retries with backoff
   * - `standby`: another app holds the queue's exclusive consumer role (`exclusive: { consumer:
   *   true }`); it retries with backoff and takes over when the role is free (alive)
   * - `stalled`: running but neither progressing nor waiting for longer than `loopStallMs`
   * - `paused`: running, paused with `QueueRegistry.pauseWorkers()`: leases nothing (alive)
   */
  state: 'stopped' | 'idle' | 'working' | 'busy' | 'erroring' | 'standby' | 'stalled' | 'paused';
  /** Running and not wedged (stopped loops count as not alive). */
  alive: boolean;
  /** Now: the processor's, or what `QueueRegistry.setConcurrency()` set. */
  concurrency: number;
  /** Paused with `QueueRegistry.pauseWorkers()` (also while stopped: it starts paused). */
  paused: boolean;
  inFlight: number;
  /** Epoch ms of the loop's last progress or start of a wait; null when stopped. */
  lastActivityAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  handlers: HandlerStatus[];
}

/** A loop that keeps failing logs at most this often (its status has every error). */
const ERROR_LOG_EVERY_MS = 10_000;

/** A lease loop: the engine's Worker, or a batch processor's BatchWorker. */
type Loop = Worker<unknown, unknown> | BatchWorker<unknown, unknown>;

/**
 * Runs one processor class: an engine `Worker` whose handler is the class's router (or,
 * for a batch processor, an engine `BatchWorker` running `concurrency` batches at once),
 * its events delivered to `@OnWorkerEvent()` methods, and start/stop at runtime (a
 * stopped loop is replaced by a new one on start).
 */
export class ProcessorRunner {
  private readonly router: HandlerRouter | BatchRouter;
  private readonly eventCalls: EventMethodCalls;
  private loop: Loop | undefined;
  private subscription: Subscription | undefined;
  private stopping: Promise<void> | undefined;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private lastErrorLogAt = 0;
  /** The last error was QueueInUseError: another app is the exclusive consumer. */
  private standby = false;
  /** The loop's concurrency: the processor's, or set at run time (kept for a loop started again). */
  private concurrency: number;
  /** pause() and no resume() since (kept for a loop started again). */
  private paused = false;

  constructor(
    readonly def: ProcessorDefinition,
    private readonly queue: AppQueue,
    private readonly logger: Logger,
    /** Running, holding no job, and silent for this long: stalled. */
    private readonly stallMs: number,
  ) {
    this.router = def.handlers[0]?.batch ? new BatchRouter(def) : new HandlerRouter(def);
    this.eventCalls = new EventMethodCalls(def, '@OnWorkerEvent', logger);
    this.concurrency = def.settings.concurrency;
  }

  /** Checks `n` as the processor's option (ValidationError). */
  checkConcurrency(n: number): void {
    assertConcurrency('concurrency', n, this.router instanceof BatchRouter);
  }

  /** The running loop uses it at once (checkConcurrency() first). */
  setConcurrency(n: number): void {
    this.concurrency = n;
    if (this.router instanceof HandlerRouter) this.router.setConcurrency(n);
    if (this.loop) this.loop.concurrency = n;
  }

  /** The loop leases nothing until resume(); resolves as the engine's `pause()` does. */
  pause(opts: PauseOptions): Promise<void> {
    this.paused = true;
    return this.loop?.pause(opts) ?? Promise.resolve();
  }

  resume(): void {
    this.paused = false;
    this.loop?.resume();
  }

  get isRunning(): boolean {
    return this.loop?.isRunning ?? false;
  }

  /** Starts the lease loop (no-op when running). Resolves once a running stop() finished. */
  async start(): Promise<void> {
    await this.stopping;
    if (this.isRunning) return;
    // A loop that stopped by itself (its queue was closed or deleted) is replaced.
    this.release();
    const { leaseMs, blockMs, heartbeat, drainTimeoutMs, backoffStrategies, file, sandbox, appName, workerTtlMs } = this.def.settings;
    const concurrency = this.concurrency;
    // For a batch processor, concurrency is its batches at once (the explorer resolved it).
    const common = { concurrency, leaseMs, blockMs, heartbeat, drainTimeoutMs, backoffStrategies, appName, workerTtlMs, autostart: false };
    const router = this.router;
    let loop: Loop;
    if (router instanceof BatchRouter) {
      loop = new BatchWorker<unknown, unknown>(this.queue, router.handle, { ...common, ...router.batch });
    } else if (file !== undefined) {
      loop = new Worker<unknown, unknown>(this.queue, file, { ...common, ...(sandbox && { sandbox }) });
    } else {
      router.reopen();
      loop = new Worker<unknown, unknown>(this.queue, router.handle, common);
    }
    this.loop = loop;
    this.subscription = loop.events.subscribe((event) => this.onEvent(event));
    // 'active' and 'progress' are built only for a loop someone listens to them on.
    if (this.def.listeners.some((l) => l.type === 'active' || l.type === 'progress')) {
      this.subscription.add(loop.activity.subscribe((event) => this.onEvent(event)));
    }
    if (this.paused) void loop.pause();
    loop.start();
    const batch = router instanceof BatchRouter ? router.batch : undefined;
    this.logger.log(msg.loopStarted(this.def.className, this.def.queueName, { concurrency, leaseMs: loop.leaseMs, batch }));
  }

  /**
   * Stops leasing, lets running handlers finish for up to `drainTimeoutMs`, then gives
   * the unfinished jobs back to pending at once and aborts their `job.signal`; then waits
   * up to `drainTimeoutMs` for the `@OnWorkerEvent()` calls still running.
   */
  stop(drainTimeoutMs = this.def.settings.drainTimeoutMs): Promise<void> {
    if (this.stopping) return this.stopping;
    const loop = this.loop;
    if (!loop) return Promise.resolve();
    this.stopping = (async () => {
      const inFlight = loop.inFlight;
      if (inFlight > 0) this.logger.log(msg.loopDraining(this.def.className, drainTimeoutMs, inFlight));
      try {
        const closed = loop.close({ drainTimeoutMs }); // stops leasing first
        if (this.router instanceof HandlerRouter) this.router.stopWaiting();
        await closed;
        // The last outcomes' @OnWorkerEvent() calls may use the queue, which closes after this.
        await this.eventCalls.finish(drainTimeoutMs);
      } finally {
        this.release();
        this.stopping = undefined;
      }
    })();
    return this.stopping;
  }

  private release(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.loop = undefined;
  }

  status(now = Date.now()): ProcessorStatus {
    const loop = this.loop;
    const inFlight = loop?.inFlight ?? 0;
    const base = {
      processor: this.def.className,
      queue: this.def.queueName,
      concurrency: this.concurrency,
      paused: this.paused,
      inFlight,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      handlers: this.router.status(),
    };
    if (!loop?.isRunning) return { ...base, state: 'stopped', alive: false, lastActivityAt: null };
    const last = loop.lastActivityAt;
    // A batch loop is busy while every lane holds a batch; a per-job loop when every slot is taken.
    const busy = loop instanceof BatchWorker ? loop.batchesHeld >= loop.concurrency : inFlight >= loop.concurrency;
    // Only a loop that holds nothing can be wedged (a long handler is not a stall).
    const stalled = inFlight === 0 && now - last > this.stallMs;
    let state: ProcessorStatus['state'];
    if (this.lastErrorAt !== null && this.lastErrorAt >= last) state = this.standby ? 'standby' : 'erroring';
    else if (loop.isPaused) state = 'paused';
    else if (busy) state = 'busy';
    else if (stalled) state = 'stalled';
    else state = inFlight > 0 ? 'working' : 'idle';
    return { ...base, state, alive: state !== 'erroring' && state !== 'stalled', lastActivityAt: last };
  }

  // ---- events ----------------------------------------------------------------

  private onEvent(event: WorkerEvent<unknown, unknown>): void {
    this.log(event);
    for (const listener of this.def.listeners) {
      if (listener.type !== event.type) continue;
      this.eventCalls.call(listener.methodName, event, argsOf(event));
    }
  }

  /** This process's sweeper of the queue returned these jobs' expired leases. */
  stalled(jobIds: readonly string[]): void {
    for (const listener of this.def.listeners) {
      if (listener.type !== 'stalled') continue;
      for (const jobId of jobIds) this.eventCalls.call(listener.methodName, { type: 'stalled', jobId }, [jobId]);
    }
  }

  private log(event: WorkerEvent<unknown, unknown>): void {
    const { className, queueName: q } = this.def;
    switch (event.type) {
      case 'active':
      case 'progress':
      case 'completed':
      case 'drained':
        break; // routine: listen with @OnWorkerEvent('completed') to log it
      case 'failed':
        if (event.willRetry) this.logger.warn(msg.jobWillRetry(q, event.job, msg.textOf(event.error)));
        break;
      case 'dead':
        this.logger.error(msg.jobDead(q, event.job, msg.textOf(event.error)));
        break;
      case 'lost':
        this.logger.warn(msg.leaseLost(q, event.job.id));
        break;
      case 'cancelled':
        this.logger.log(msg.jobCancelled(q, event.job.id, msg.textOf(event.error)));
        break;
      case 'rateLimited':
        break; // expected back-pressure from upstream: listen with @OnWorkerEvent('rateLimited') to log it
      case 'error':
        this.loopError(event.error);
        break;
      case 'stopped':
        this.logger.log(msg.loopEnded(className, q, event.reason));
        break;
      default: {
        // Newer engine events.
        const other = event as { type: string; reason?: string };
        this.logger.warn(msg.loopEvent(className, q, other.type, other.reason));
      }
    }
  }

  /** Recorded for the status; logged when it changes kind, then at most every ERROR_LOG_EVERY_MS. */
  private loopError(error: unknown): void {
    const now = Date.now();
    const standby = error instanceof QueueInUseError;
    const first = standby !== this.standby || this.lastErrorAt === null;
    this.lastError = msg.textOf(error);
    this.lastErrorAt = now;
    this.standby = standby;
    if (!first && now - this.lastErrorLogAt < ERROR_LOG_EVERY_MS) return;
    this.lastErrorLogAt = now;
    if (standby) this.logger.log(msg.standingBy(this.def.className, this.lastError));
    else {
      const unreachable = error instanceof RelqError && error.retryable;
      this.logger.warn(msg.loopFailing(this.def.className, this.def.queueName, unreachable, this.lastError));
    }
  }
}

/** The arguments an `@OnWorkerEvent()` method gets for each event (see its decorator). */
function argsOf(event: WorkerEvent<unknown, unknown>): unknown[] {
  switch (event.type) {
    case 'active':
      return [event.job];
    case 'progress':
      return [event.job, event.progress];
    case 'completed':
      return [event.job, event.result];
    case 'failed':
      return [event.job, event.error, event.willRetry];
    case 'dead':
      return [event.job, event.error];
    case 'lost':
      return [event.job];
    case 'cancelled':
      return [event.job, event.error];
    case 'rateLimited':
      return [event.job, event.delayMs];
    case 'error':
      return [event.error];
    case 'drained':
      return [];
    default:
      return [event];
  }
}
