import { Injectable, Logger } from '@nestjs/common';
import { Queue } from '../../core/queue/queue.js';
import type { SweepResult } from '../../core/management/read-types.js';
import { RelqConfigError, validating } from '../errors.js';
import type { ResolvedQueueOptions } from './queue-options.js';
import { LOG_CONTEXT } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import type { ProcessorRunner, ProcessorStatus } from '../processors/processor-runner.js';
import type { QueueSweeper, SweeperStatus } from '../sweeper/queue-sweeper.js';
import { RelqConnection } from './relq-connection.js';

/** One queue registered with `registerQueue`, and how it was configured. Not part of the public API. */
export interface RegisteredQueue {
  readonly queue: Queue<unknown, unknown>;
  readonly options: ResolvedQueueOptions;
}

/**
 * Runtime access to the queues and lease loops of this app: look queues up by name,
 * read the loops' status, stop and start loops (e.g. to drain an instance before a
 * deploy, or to switch an API instance into a worker).
 *
 * It is also where relq keeps them: one `Queue` per name however many feature modules
 * register it (they must agree on its options), the lease loop of each processor and the
 * sweeper of each queue. The orchestrator adds loops and sweepers and runs their lifecycle.
 */
@Injectable()
export class QueueRegistry {
  private readonly logger = new Logger(LOG_CONTEXT);
  private readonly queues = new Map<string, RegisteredQueue & { signature: string }>();
  private readonly runners: ProcessorRunner[] = [];
  private readonly sweepers = new Map<string, QueueSweeper>();

  constructor(private readonly connection: RelqConnection) {}

  /** The queue registered under `name`; throws when there is none. */
  getQueue<Data = unknown, Result = unknown>(name: string): Queue<Data, Result> {
    const entry = this.queues.get(name);
    if (!entry) throw new RelqConfigError(msg.noSuchQueue(name, this.getQueueNames()));
    return entry.queue as Queue<Data, Result>;
  }

  hasQueue(name: string): boolean {
    return this.queues.has(name);
  }

  getQueueNames(): string[] {
    return [...this.queues.keys()];
  }

  /** Status of every discovered processor's lease loop. */
  getProcessors(): ProcessorStatus[] {
    return this.runners.map((r) => r.status());
  }

  getSweepers(): SweeperStatus[] {
    return [...this.sweepers.values()].map((s) => s.status());
  }

  /**
   * Starts the lease loops of `queueName` (all when omitted) that are not running,
   * also when `workers.enabled` is false. Returns how many were started.
   */
  async startWorkers(queueName?: string): Promise<number> {
    const runners = this.select(queueName).filter((r) => !r.isRunning);
    await Promise.all(runners.map((r) => r.start()));
    return runners.length;
  }

  /**
   * Stops the lease loops of `queueName` (all when omitted): no new leases; running
   * handlers get `drainTimeoutMs` (default: the processor's) to finish, then their jobs
   * go back to pending at once. Returns how many were stopped.
   */
  async stopWorkers(queueName?: string, opts: { drainTimeoutMs?: number } = {}): Promise<number> {
    const runners = this.select(queueName).filter((r) => r.isRunning);
    await Promise.all(runners.map((r) => r.stop(opts.drainTimeoutMs)));
    return runners.length;
  }

  /** Runs one sweep of `queueName` now, outside the schedule; the sweeper's status records it. */
  sweep(queueName: string, opts: { limit?: number } = {}): Promise<SweepResult> {
    const queue = this.getQueue(queueName);
    const sweeper = this.sweepers.get(queueName);
    if (!sweeper) return queue.sweep(opts); // before bootstrap
    return sweeper.runOnce(opts);
  }

  private select(queueName: string | undefined): ProcessorRunner[] {
    if (queueName !== undefined) this.getQueue(queueName); // throws for an unknown name
    return this.runners.filter((r) => queueName === undefined || r.def.queueName === queueName);
  }

  // ---- what the module's providers, the orchestrator and the health check use ----------------

  /**
   * The queue for `options.name`, created on first registration: the engine's Queue checks
   * its options, and its warnings (eviction policy, ghost ids) go to the app's log. @internal
   */
  addQueue(options: ResolvedQueueOptions): Queue<unknown, unknown> {
    const signature = signatureOf(options);
    const existing = this.queues.get(options.name);
    if (existing) {
      if (existing.signature !== signature) throw new RelqConfigError(msg.registeredTwice(options.name));
      return existing.queue;
    }
    const queue = validating(msg.queueWhere(options.name), () => {
      return new Queue<unknown, unknown>(options.name, {
        ...options.engine,
        connection: options.connection ?? this.connection.client,
        onWarning: (w) => this.logger.warn(w.message),
      });
    });
    this.queues.set(options.name, { queue, options, signature });
    return queue;
  }

  /** @internal */
  getEntry(name: string): RegisteredQueue | undefined {
    return this.queues.get(name);
  }

  /** @internal */
  getEntries(): RegisteredQueue[] {
    return [...this.queues.values()];
  }

  /** @internal */
  addRunner(runner: ProcessorRunner): void {
    this.runners.push(runner);
  }

  /** @internal */
  getRunners(): readonly ProcessorRunner[] {
    return this.runners;
  }

  /** @internal */
  addSweeper(sweeper: QueueSweeper): void {
    this.sweepers.set(sweeper.queueName, sweeper);
  }

  /** @internal */
  getSweeper(queueName: string): QueueSweeper | undefined {
    return this.sweepers.get(queueName);
  }

  /** @internal */
  getQueueSweepers(): QueueSweeper[] {
    return [...this.sweepers.values()];
  }

  /** Closes every queue (and any connection a queue opened for itself). @internal */
  async closeQueues(): Promise<void> {
    await Promise.all([...this.queues.values()].map((e) => e.queue.close().catch(() => undefined)));
  }
}

/** Two registrations agree when their options do, whatever order their keys were written in. */
function signatureOf(o: ResolvedQueueOptions): string {
  const connection = o.connection === undefined ? null : typeof o.connection === 'string' ? o.connection : 'object';
  return JSON.stringify({ ...o, connection }, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}
