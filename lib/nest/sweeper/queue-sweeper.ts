import type { Logger } from '@nestjs/common';
import { ValidationError } from '../../core/errors.js';
import { internalsOf } from '../../core/queue/internals.js';
import type { AppQueue } from '../queues/app-queue.js';
import type { SweepResult } from '../../core/management/read-types.js';
import type { ResolvedSweeper } from './sweeper-options.js';
import * as msg from '../relq.messages.js';

/** What the health check reads of one sweeper. */
export interface SweeperStatus {
  queue: string;
  enabled: boolean;
  running: boolean;
  intervalMs: number;
  /** Epoch ms of the last sweep that succeeded; null before the first. */
  lastRunAt: number | null;
  lastResult: SweepResult | null;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Epoch ms the sweeper started (the reference while it has not run yet). */
  startedAt: number | null;
}

/**
 * Calls `queue.sweep()` every `intervalMs` (± jitter, so many instances spread out):
 * expired leases back to pending, due delayed jobs promoted, retention and idempotency
 * windows cleared. A failing sweep is logged once per streak and retried next interval.
 * Timers are unref'd: a sweeper never keeps the process alive.
 */
export class QueueSweeper {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private running = false;
  private failing = false;
  private lastRunAt: number | null = null;
  private lastResult: SweepResult | null = null;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private startedAt: number | null = null;

  constructor(
    private readonly queue: AppQueue,
    private readonly settings: ResolvedSweeper,
    private readonly logger: Logger,
    /** Told the ids of the expired leases each sweep returned (the processor's 'stalled' event). */
    private readonly onStalled: (jobIds: string[]) => void = () => undefined,
  ) {}

  get queueName(): string {
    return this.queue.name;
  }

  start(): void {
    if (!this.settings.enabled || this.running) return;
    this.running = true;
    this.startedAt = Date.now();
    // The first sweep comes soon (a random part of one interval), then every interval.
    this.schedule(Math.floor(Math.random() * Math.min(this.settings.intervalMs, 1000)));
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** Runs one sweep now: on schedule, or asked for by `QueueRegistry.sweep` (its status sees both). */
  async runOnce(opts: { limit?: number } = {}): Promise<SweepResult> {
    try {
      const { result, stalledIds } = await internalsOf(this.queue)!.sweepReporting({ limit: this.settings.limit, ...opts });
      if (stalledIds.length) this.onStalled(stalledIds);
      this.lastRunAt = Date.now();
      this.lastResult = result;
      if (this.failing) this.logger.log(msg.sweeperRecovered(this.queue.name));
      this.failing = false;
      if (result.stalled > 0) this.logger.warn(msg.leasesReclaimed(this.queue.name, result.stalled, result.deadLettered));
      else if (result.promoted > 0) this.logger.debug(msg.jobsPromoted(this.queue.name, result.promoted));
      return result;
    } catch (err) {
      if (err instanceof ValidationError) throw err; // a caller's bad limit, not a failing sweeper
      this.lastError = msg.textOf(err);
      this.lastErrorAt = Date.now();
      if (!this.failing) this.logger.warn(msg.sweeperFailing(this.queue.name, this.lastError));
      this.failing = true;
      throw err;
    }
  }

  status(): SweeperStatus {
    return {
      queue: this.queue.name,
      enabled: this.settings.enabled,
      running: this.running,
      intervalMs: this.settings.intervalMs,
      lastRunAt: this.lastRunAt,
      lastResult: this.lastResult,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      startedAt: this.startedAt,
    };
  }

  private schedule(delay: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.runOnce()
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.inFlight = undefined;
          this.schedule(this.nextDelay());
        });
    }, delay);
    this.timer.unref();
  }

  private nextDelay(): number {
    const { intervalMs, jitter } = this.settings;
    const spread = intervalMs * jitter;
    return Math.max(1, Math.round(intervalMs - spread + Math.random() * 2 * spread));
  }
}
