import type { Logger } from '@nestjs/common';
import { ValidationError } from '../../core/errors.js';
import { SchedulerTicker } from '../../core/schedulers/ticker.js';
import type { AppQueue } from '../queues/app-queue.js';
import type { ResolvedSchedulerOptions, SchedulerDeclaration } from './scheduler-options.js';
import * as msg from '../relq.messages.js';

/**
 * One queue's schedulers in the app's lifecycle: upserts the declared ones at startup
 * (unchanged ones write nothing, so every instance may), removes the undeclared ones when
 * asked, and runs a SchedulerTicker. A declaration the queue refuses (ValidationError) stops
 * the app; a Redis failure is logged and the upserts are tried again before later ticks.
 */
export class QueueSchedulers {
  private ticker: SchedulerTicker | undefined;
  private synced = false;

  constructor(
    private readonly queue: AppQueue,
    private readonly declared: readonly SchedulerDeclaration[],
    private readonly options: ResolvedSchedulerOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.sync().catch((err: unknown) => {
      if (err instanceof ValidationError) throw err;
      this.logger.warn(msg.schedulersFailing(this.queue.name, msg.textOf(err)));
    });
    if (!(this.options.tick ?? this.declared.length > 0)) return;
    const queue = this.queue;
    this.ticker = new SchedulerTicker(
      {
        runSchedulers: async () => {
          if (!this.synced) await this.sync();
          return queue.runSchedulers();
        },
      },
      { maxIntervalMs: this.options.maxIntervalMs, onError: (err) => this.logger.debug(msg.schedulersFailing(queue.name, msg.textOf(err))) },
    );
    this.ticker.start();
  }

  async stop(): Promise<void> {
    await this.ticker?.stop();
  }

  /** Schedulers the health check reports: the ticker's last error, if its last tick failed. */
  get lastError(): string | null {
    const err = this.ticker?.lastError;
    return err ? msg.textOf(err) : null;
  }

  private async sync(): Promise<void> {
    for (const d of this.declared) await this.queue.upsertScheduler(d.id, d.spec, d.template);
    if (this.options.removeUndeclared) {
      const keep = new Set(this.declared.map((d) => d.id));
      for (const s of await this.queue.getSchedulers()) {
        if (!keep.has(s.id)) await this.queue.removeScheduler(s.id);
      }
    }
    this.synced = true;
  }
}
