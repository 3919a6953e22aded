import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { Queue } from '../../core/queue/queue.js';
import { RelqConfigError } from '../errors.js';
import type { ResolvedRootOptions } from '../options.js';
import type { ProcessorDefinition } from '../discovery/processor-definition.js';
import { QueueStore } from './queue.store.js';
import { RelqConnection } from './relq-connection.js';
import { QueueSweeper } from './queue-sweeper.js';
import { RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import { ProcessorRunner } from './processor-runner.js';

/** Longest wait for closeQueue() / reopenQueue() at shutdown / startup (Redis may be away). */
const LIFECYCLE_TIMEOUT_MS = 2000;
const REOPEN_RETRY_MAX_MS = 5000;

/**
 * Owns what runs: lease loops (one ProcessorRunner per processor class) and sweepers (one per
 * queue). Reopens `closeOnShutdown` queues in onModuleInit, starts loops and sweepers in
 * onApplicationBootstrap. In beforeApplicationShutdown it stops them (draining running
 * handlers), closes `closeOnShutdown` queues, then closes the Queue objects, which releases
 * add() calls waiting for room on a full queue (before the HTTP server waits for the
 * requests making them). Closes the shared connection in onApplicationShutdown. @internal
 */
@Injectable()
export class QueueOrchestrator
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger('relq');
  private readonly runners: ProcessorRunner[] = [];
  private readonly sweepers = new Map<string, QueueSweeper>();
  private readonly reopenTimers = new Set<NodeJS.Timeout>();
  private bootstrapped = false;
  private opened = false;
  private stopping: Promise<void> | undefined;
  private shutDown = false;

  constructor(
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
    private readonly store: QueueStore,
    private readonly connection: RelqConnection,
  ) {}

  /** Called by the explorer with every discovered processor; creates nothing that runs. */
  addProcessors(defs: ProcessorDefinition[]): void {
    for (const def of defs) {
      const entry = this.store.get(def.queueName);
      if (!entry) throw new RelqConfigError(`queue '${def.queueName}' is not registered`);
      this.runners.push(new ProcessorRunner(def, entry.queue, this.logger));
    }
  }

  getRunners(): readonly ProcessorRunner[] {
    return this.runners;
  }

  getSweepers(): QueueSweeper[] {
    return [...this.sweepers.values()];
  }

  /** The sweeper of `queueName` (undefined before bootstrap). */
  getSweeper(queueName: string): QueueSweeper | undefined {
    return this.sweepers.get(queueName);
  }

  /** `closeOnShutdown` queues are open while the app runs: reopened before anything starts. */
  async onModuleInit(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    await Promise.all(
      this.store
        .all()
        .filter((e) => e.options.closeOnShutdown)
        .map((e) => this.reopen(e.queue, 0)),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.bootstrapped) return;
    this.bootstrapped = true;
    for (const { queue, options } of this.store.all()) {
      const sweeper = new QueueSweeper(queue, options.sweeper, this.logger);
      this.sweepers.set(queue.name, sweeper);
      sweeper.start();
    }
    if (!this.options.workersEnabled) {
      if (this.runners.length) {
        this.logger.log(`workers disabled: ${this.runners.length} processor(s) not started (producers only)`);
      }
      return;
    }
    await Promise.all(this.runners.map((h) => h.start()));
  }

  beforeApplicationShutdown(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.shutDown) return;
    this.shutDown = true;
    // In case beforeApplicationShutdown was skipped (e.g. an init failure).
    await this.beforeApplicationShutdown();
    await this.store.closeAll();
    await this.connection.close();
  }

  private async stopAll(): Promise<void> {
    for (const t of this.reopenTimers) clearTimeout(t);
    this.reopenTimers.clear();
    // 1. No more leases; running handlers drain (they may still add jobs, also to full queues).
    await Promise.all([...this.runners.map((h) => h.stop()), ...[...this.sweepers.values()].map((s) => s.stop())]);
    // 2. closeOnShutdown: the queue takes no more jobs; consumers elsewhere drain it and stop.
    await Promise.all(
      this.store
        .all()
        .filter((e) => e.options.closeOnShutdown)
        .map((e) => this.closeQueue(e.queue)),
    );
    // 3. Closing the Queue objects releases add() calls still waiting for room (ClosedError),
    //    so that nothing (an HTTP request blocked in add(), say) holds up the rest of app.close().
    await this.store.closeAll();
  }

  private async closeQueue(queue: Queue<unknown, unknown>): Promise<void> {
    try {
      const closed = await withTimeout(queue.closeQueue(), LIFECYCLE_TIMEOUT_MS, 'closeQueue()');
      this.logger.log(`queue '${queue.name}' ${closed ? 'closed' : 'was already closed'} (closeOnShutdown)`);
    } catch (err) {
      this.logger.warn(`queue '${queue.name}': closeQueue() on shutdown failed, the queue stays open: ${text(err)}`);
    }
  }

  /** reopenQueue(), retried in the background while Redis cannot be reached. */
  private async reopen(queue: Queue<unknown, unknown>, attempt: number): Promise<void> {
    if (this.stopping) return;
    try {
      const reopened = await withTimeout(queue.reopenQueue(), LIFECYCLE_TIMEOUT_MS, 'reopenQueue()');
      if (reopened) this.logger.log(`queue '${queue.name}' reopened (closeOnShutdown)`);
      else if (attempt > 0) this.logger.log(`queue '${queue.name}' is open (closeOnShutdown)`);
    } catch (err) {
      if (this.stopping) return;
      const delay = Math.min(REOPEN_RETRY_MAX_MS, 250 * 2 ** attempt);
      if (attempt === 0) {
        this.logger.warn(
          `queue '${queue.name}': reopenQueue() at startup failed (closeOnShutdown), retrying in the background; ` +
            `until it succeeds, adds to a closed queue fail with QueueClosedError: ${text(err)}`,
        );
      }
      const timer = setTimeout(() => {
        this.reopenTimers.delete(timer);
        void this.reopen(queue, attempt + 1);
      }, delay);
      timer.unref();
      this.reopenTimers.add(timer);
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
