import type { Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { Queue } from '../core/queue.js';

import { Worker, type WorkerEvent } from '../core/worker.js';
import { HandlerRouter, type HandlerStatus } from './handler-router.js';
import type { ProcessorDefinition } from './processor-definition.js';

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
   * - `stalled`: running but neither progressing nor waiting for longer than `loopStallMs`
   */
  state: 'stopped' | 'idle' | 'working' | 'busy' | 'erroring' | 'stalled';
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

/**
 * Runs one processor class: an engine `Worker` whose handler is the class's router, its
 * outcome events delivered to `@OnQueueEvent()` methods, and start/stop at runtime (a
 * stopped Worker is replaced by a new one on start). @internal
 */
export class WorkerHost {
  readonly router: HandlerRouter;
  private worker: Worker<unknown, unknown> | undefined;
  private subscription: Subscription | undefined;
  private stopping: Promise<void> | undefined;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private lastErrorLogAt = 0;

  constructor(
    readonly def: ProcessorDefinition,
    private readonly queue: Queue<unknown, unknown>,
    private readonly logger: Logger,
  ) {
    this.router = new HandlerRouter(def);
  }

  get isRunning(): boolean {
    return this.worker?.isRunning ?? false;
  }

  /** Starts the lease loop (no-op when running). Resolves once a running stop() finished. */
  async start(): Promise<void> {
    await this.stopping;
    if (this.worker?.isRunning) return;
    // A loop that stopped by itself (its queue was closed) is replaced.
    this.subscription?.unsubscribe();
    this.worker = undefined;
    const { concurrency, leaseMs, blockMs, heartbeat, drainTimeoutMs } = this.def.settings;
    const worker = new Worker<unknown, unknown>(this.queue, this.router.handle, {
      concurrency,
      leaseMs,
      blockMs,
      heartbeat,
      drainTimeoutMs,
      autostart: false,
    });
    this.subscription = worker.events.subscribe((event) => this.onEvent(event));
    this.worker = worker;
    worker.start();
    this.logger.log(
      `${this.def.className} consumes queue '${this.def.queueName}' (concurrency ${concurrency}, lease ${leaseMs} ms)`,
    );
  }

  /**
   * Stops leasing, lets running handlers finish for up to `drainTimeoutMs`, then gives
   * the unfinished jobs back to pending at once and aborts their `job.signal`.
   */
  stop(drainTimeoutMs = this.def.settings.drainTimeoutMs): Promise<void> {
    if (this.stopping) return this.stopping;
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    this.stopping = (async () => {
      const inFlight = worker.inFlight;
      if (inFlight > 0) {
        this.logger.log(`${this.def.className}: stopping, waiting up to ${drainTimeoutMs} ms for ${inFlight} running job(s)`);
      }
      try {
        await worker.close({ drainTimeoutMs });
      } finally {
        this.subscription?.unsubscribe();
        this.subscription = undefined;
        this.worker = undefined;
        this.stopping = undefined;
      }
    })();
    return this.stopping;
  }

  status(loopStallMs: number | undefined, now = Date.now()): ProcessorStatus {
    const worker = this.worker;
    const base = {
      processor: this.def.className,
      queue: this.def.queueName,
      concurrency: this.def.settings.concurrency,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      handlers: this.router.status(),
    };
    if (!worker || !worker.isRunning) {
      return { ...base, state: 'stopped', alive: false, inFlight: worker?.inFlight ?? 0, lastActivityAt: null };
    }
    const stallMs = loopStallMs ?? this.def.settings.blockMs + 10_000;
    const inFlight = worker.inFlight;
    const last = worker.lastActivityAt;
    let state: ProcessorStatus['state'];
    if (this.lastErrorAt !== null && this.lastErrorAt >= last) state = 'erroring';
    else if (inFlight >= this.def.settings.concurrency) state = 'busy';
    else if (now - last > stallMs) state = 'stalled';
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
        this.lastError = text(event.error);
        this.lastErrorAt = now;
        if (now - this.lastErrorLogAt >= ERROR_LOG_EVERY_MS) {
          this.lastErrorLogAt = now;
          this.logger.warn(`${this.def.className}: lease loop of '${q}' cannot reach Redis, retrying: ${this.lastError}`);
        }
        break;
      }
      default: {
        // Newer engine events (e.g. the loop stopping by itself when its queue is closed).
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

