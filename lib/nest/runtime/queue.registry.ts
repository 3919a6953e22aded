import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from '../../core/queue/queue.js';
import type { SweepResult } from '../../core/types.js';
import { RelqConfigError } from '../errors.js';
import type { ResolvedRootOptions } from '../options.js';
import { QueueOrchestrator } from './queue.orchestrator.js';
import { QueueStore } from './queue.store.js';
import type { SweeperStatus } from './queue-sweeper.js';
import { RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import type { ProcessorStatus } from './processor-runner.js';

/**
 * Runtime access to the queues and lease loops of this app: look queues up by name,
 * read the loops' status, stop and start loops (e.g. to drain an instance before a
 * deploy, or to switch an API instance into a worker).
 */
@Injectable()
export class QueueRegistry {
  constructor(
    private readonly store: QueueStore,
    private readonly orchestrator: QueueOrchestrator,
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
  ) {}

  /** The queue registered under `name`; throws when there is none. */
  getQueue<Data = unknown, Result = unknown>(name: string): Queue<Data, Result> {
    const entry = this.store.get(name);
    if (!entry) {
      throw new RelqConfigError(
        `no queue '${name}' is registered (known: ${this.store.names().join(', ') || 'none'}); add QueueModule.registerQueue({ name: '${name}' })`,
      );
    }
    return entry.queue as Queue<Data, Result>;
  }

  hasQueue(name: string): boolean {
    return this.store.has(name);
  }

  getQueueNames(): string[] {
    return this.store.names();
  }

  /** Status of every discovered processor's lease loop. */
  getProcessors(): ProcessorStatus[] {
    return this.orchestrator.getRunners().map((h) => h.status(this.options.health.loopStallMs));
  }

  getSweepers(): SweeperStatus[] {
    return this.orchestrator.getSweepers().map((s) => s.status());
  }

  /**
   * Starts the lease loops of `queueName` (all when omitted) that are not running,
   * also when `workers.enabled` is false. Returns how many were started.
   */
  async startWorkers(queueName?: string): Promise<number> {
    const runners = this.select(queueName).filter((h) => !h.isRunning);
    await Promise.all(runners.map((h) => h.start()));
    return runners.length;
  }

  /**
   * Stops the lease loops of `queueName` (all when omitted): no new leases; running
   * handlers get `drainTimeoutMs` (default: the processor's) to finish, then their jobs
   * go back to pending at once. Returns how many were stopped.
   */
  async stopWorkers(queueName?: string, opts: { drainTimeoutMs?: number } = {}): Promise<number> {
    const runners = this.select(queueName).filter((h) => h.isRunning);
    await Promise.all(runners.map((h) => h.stop(opts.drainTimeoutMs)));
    return runners.length;
  }

  /** Runs one sweep of `queueName` now, outside the schedule; the sweeper's status records it. */
  sweep(queueName: string, opts: { limit?: number } = {}): Promise<SweepResult> {
    const queue = this.getQueue(queueName);
    const sweeper = this.orchestrator.getSweeper(queueName);
    if (!sweeper) return queue.sweep(opts); // before bootstrap
    return sweeper.runOnce(opts);
  }

  private select(queueName: string | undefined) {
    if (queueName !== undefined && !this.store.has(queueName)) this.getQueue(queueName);
    return this.orchestrator.getRunners().filter((h) => queueName === undefined || h.def.queueName === queueName);
  }
}
