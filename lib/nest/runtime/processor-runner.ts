import type { Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { Queue } from '../../core/queue/queue.js';

import { BatchWorker } from '../../core/worker/batch-worker.js';
import { QueueInUseError, RelqError } from '../../core/errors.js';
import { Worker, type WorkerEvent } from '../../core/worker/worker.js';
import { BatchRouter } from './batch-router.js';
import { HandlerRouter, type HandlerStatus } from './handler-router.js';
import type { ResolvedBatch } from '../options.js';
import type { ProcessorDefinition } from '../discovery/processor-definition.js';

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
   */
  state: 'stopped' | 'idle' | 'working' | 'busy' | 'erroring' | 'standby' | 'stalled';
  /** Running and not wedged (stopped loops count as not alive). */
  alive: boolean;
  concurrency: number;
  inFlight: number;
  /** Epoch ms of the loop's last progress or start of a wait; null when stopped. */
  lastActivityAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  handlers: HandlerStatus[];
}

const ERROR_LOG_EVERY_MS = 10_000;

/** A lease loop: the engine's Worker, or a batch processor's BatchWorker. */
type Runner = Worker<unknown, unknown> | BatchWorker<unknown, unknown>;

/**
 * Runs one processor class: an engine `Worker` whose handler is the class's router (or,
 * for a batch processor, an engine `BatchWorker` running `concurrency` batches at once),
 * its outcome events delivered to `@OnQueueEvent()` methods, and start/stop at runtime (a
 * stopped loop is replaced by a new one on start). @internal
 */
export class ProcessorRunner {
  readonly router: HandlerRouter | BatchRouter;
  private runner: Runner | undefined;
  private subscription: Subscription | undefined;
  private stopping: Promise<void> | undefined;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private lastErrorLogAt = 0;
  /** The last error was QueueInUseError: another app is the exclusive consumer. */
  private standby = false;

  constructor(
    readonly def: ProcessorDefinition,
    private readonly queue: Queue<unknown, unknown>,
    private readonly logger: Logger,
  ) {
    const batch = def.handlers[0]?.batch;
    this.router = batch ? new BatchRouter(def) : new HandlerRouter(def);
  }

  /** The batch settings of a batch processor. */
  get batch(): ResolvedBatch | undefined {
    return this.def.handlers[0]?.batch;
  }

  get isRunning(): boolean {
    return this.runner?.isRunning ?? false;
  }

  /** Starts the lease loop (no-op when running). Resolves once a running stop() finished. */
  async start(): Promise<void> {
    await this.stopping;
    if (this.isRunning) return;
    // A loop that stopped by itself (its queue was closed or deleted) is replaced.
    this.release();
    if (this.router instanceof HandlerRouter) this.router.reopen();
    const { concurrency, leaseMs, blockMs, heartbeat, drainTimeoutMs } = this.def.settings;
    const batch = this.batch;
    // For a batch processor, concurrency is its batches at once (the explorer resolved it).
    const common = { concurrency, leaseMs, blockMs, heartbeat, drainTimeoutMs, autostart: false };
    const runner: Runner = batch
      ? new BatchWorker<unknown, unknown>(this.queue, (this.router as BatchRouter).handle, { ...common, size: batch.size, waitMs: batch.waitMs })
      : new Worker<unknown, unknown>(this.queue, (this.router as HandlerRouter).handle, common);
    this.runner = runner;
    this.subscription = runner.events.subscribe((event) => this.onEvent(event));
    runner.start();
    this.logger.log(
      `${this.def.className} consumes queue '${this.def.queueName}' ` +
        (batch
          ? `in batches of up to ${batch.size} (wait ${batch.waitMs} ms, ${concurrency} at once, lease ${leaseMs} ms)`
          : `(concurrency ${concurrency}, lease ${leaseMs} ms)`),
    );
  }

  /**
   * Stops leasing, lets running handlers finish for up to `drainTimeoutMs`, then gives
   * the unfinished jobs back to pending at once and aborts their `job.signal`.
   */
  stop(drainTimeoutMs = this.def.settings.drainTimeoutMs): Promise<void> {
    if (this.stopping) return this.stopping;
    const runner = this.runner;
    if (!runner) return Promise.resolve();
    this.stopping = (async () => {
      const inFlight = this.inFlight;
      if (inFlight > 0) {
        this.logger.log(`${this.def.className}: stopping, waiting up to ${drainTimeoutMs} ms for ${inFlight} running job(s)`);
      }
      try {
        const closed = runner.close({ drainTimeoutMs }); // stops leasing first
        if (this.router instanceof HandlerRouter) this.router.stopWaiting();
        await closed;
      } finally {
        this.release();
        this.stopping = undefined;
      }
    })();
    return this.stopping;
  }

  private get inFlight(): number {
    return this.runner?.inFlight ?? 0;
  }

  private release(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.runner = undefined;
  }

  status(loopStallMs: number | undefined, now = Date.now()): ProcessorStatus {
    const base = {
      processor: this.def.className,
      queue: this.def.queueName,
      concurrency: this.def.settings.concurrency,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      handlers: this.router.status(),
    };
    const runner = this.runner;
    if (!runner?.isRunning) {
      return { ...base, state: 'stopped', alive: false, inFlight: this.inFlight, lastActivityAt: null };
    }
    const stallMs = loopStallMs ?? this.def.settings.blockMs + 10_000;
    const inFlight = this.inFlight;
    const last = runner.lastActivityAt;
    // A batch loop is busy while every lane holds a batch; a per-job loop when every slot is taken.
    const busy = runner instanceof BatchWorker ? runner.batchesHeld >= runner.concurrency : inFlight >= runner.concurrency;
    // Only a loop that holds nothing can be wedged (a long handler is not a stall).
    const stalled = inFlight === 0 && now - last > stallMs;
    let state: ProcessorStatus['state'];
    if (this.lastErrorAt !== null && this.lastErrorAt >= last) state = this.standby ? 'standby' : 'erroring';
    else if (busy) state = 'busy';
    else if (stalled) state = 'stalled';
    else state = inFlight > 0 ? 'working' : 'idle';
    return { ...base, state, alive: state !== 'erroring' && state !== 'stalled', inFlight, lastActivityAt: last };
  }

  // ---- events ----------------------------------------------------------------

  private onEvent(event: WorkerEvent<unknown, unknown>): void {
    this.log(event);
    for (const listener of this.def.listeners) {
      if (listener.type !== event.type) continue;
      void this.deliver(listener.methodName, event, argsOf(event));
    }
  }

  private async deliver(methodName: string, event: object, args: unknown[]): Promise<void> {
    try {
      const instance = (await this.def.instances.get(event)) as Record<string, unknown>;
      const method = instance[methodName] as (...a: unknown[]) => unknown;
      await method.apply(instance, args);
    } catch (err) {
      this.logger.error(
        `${this.def.className}.${methodName} (@OnQueueEvent) threw: ${err instanceof Error ? err.message : String(err)}`,
        err instanceof Error ? err.stack : undefined,
      );
    }
  }

  private log(event: WorkerEvent<unknown, unknown>): void {
    const q = this.def.queueName;
    switch (event.type) {
      case 'completed':
        break; // routine: listen with @OnQueueEvent('completed') to log it
      case 'failed':
        if (event.willRetry) {
          this.logger.warn(
            `job ${event.job.id} of '${q}' failed (attempt ${event.job.attempt}/${event.job.maxAttempts}), will retry: ${text(event.error)}`,
          );
        }
        break;
      case 'dead':
        this.logger.error(`job ${event.job.id} of '${q}' dead-lettered after attempt ${event.job.attempt}: ${text(event.error)}`);
        break;
      case 'lost':
        this.logger.warn(`job ${event.job.id} of '${q}': lease lost (it ran out); another worker may run it again`);
        break;
      case 'error': {
        const now = Date.now();
        const standby = event.error instanceof QueueInUseError;
        const first = standby !== this.standby || this.lastErrorAt === null;
        this.lastError = text(event.error);
        this.lastErrorAt = now;
        this.standby = standby;
        if (first || now - this.lastErrorLogAt >= ERROR_LOG_EVERY_MS) {
          this.lastErrorLogAt = now;
          if (standby) {
            this.logger.log(`${this.def.className}: standing by, ${this.lastError}; it takes over when that role is free`);
          } else {
            const why = event.error instanceof RelqError && event.error.retryable ? 'cannot reach Redis' : 'fails';
            this.logger.warn(`${this.def.className}: lease loop of '${q}' ${why}, retrying: ${this.lastError}`);
          }
        }
        break;
      }
      case 'stopped':
        this.logger.log(
          `${this.def.className}: lease loop of '${q}' stopped by itself (${event.reason}); ` +
            'QueueRegistry.startWorkers() starts it again',
        );
        break;
      default: {
        // Newer engine events.
        const other = event as { type: string; reason?: string };
        this.logger.warn(`${this.def.className}: lease loop of '${q}': ${other.type}${other.reason ? ` (${other.reason})` : ''}`);
      }
    }
  }
}

function argsOf(event: WorkerEvent<unknown, unknown>): unknown[] {
  switch (event.type) {
    case 'completed':
      return [event.job, event.result];
    case 'failed':
      return [event.job, event.error, event.willRetry];
    case 'dead':
      return [event.job, event.error];
    case 'lost':
      return [event.job];
    case 'error':
      return [event.error];
    default:
      return [event];
  }
}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

