import { Injectable, Logger } from '@nestjs/common';
import { Queue } from '../../core/queue/queue.js';
import { PartitionedQueue } from '../../core/partitions/partitioned-queue.js';
import type { AppQueue } from './app-queue.js';
import type { SweepResult } from '../../core/management/read-types.js';
import { AlreadyRegisteredError, RelqConfigError, validating } from '../errors.js';
import type { RegisterQueueOptions, ResolvedQueueOptions } from './queue-options.js';
import type { Job } from '../../core/worker/worker.js';
import type { ProcessorOptions } from '../processors/processor-options.js';
import { LOG_CONTEXT } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import type { ProcessorRunner, ProcessorStatus } from '../processors/processor-runner.js';
import { assertPauseOptions, type PauseOptions } from '../../core/worker/lease-worker.js';
import type { QueueSweeper, SweeperStatus } from '../sweeper/queue-sweeper.js';
import { RelqConnection } from './relq-connection.js';

/** One queue registered with `registerQueue`, and how it was configured. Not part of the public API. */
export interface RegisteredQueue {
  readonly queue: AppQueue;
  readonly options: ResolvedQueueOptions;
  /** Added with `addQueue()` (removable), not declared with `registerQueue()`. */
  readonly runtime: boolean;
}

/** A queue joined the app, or left it (`removeQueue()`, just before its Queue closes). */
type QueueChange = { type: 'added' | 'removed'; queue: AppQueue };

/** What runs queues added at run time: the lifecycle side, bound by it at construction. @internal */
export interface QueueRuntime {
  addQueue(name: string, options: unknown): Promise<AppQueue>;
  addProcessor(queueName: string, target: unknown, options: unknown): Promise<void>;
  addQueueListener(queueName: string, instance: unknown): Promise<void>;
  removeQueue(name: string, options: unknown): Promise<void>;
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
  private readonly watchers = new Set<(change: QueueChange) => void>();
  private runtime: QueueRuntime | undefined;
  private readonly runners: ProcessorRunner[] = [];
  private readonly sweepers = new Map<string, QueueSweeper>();

  constructor(private readonly connection: RelqConnection) {}

  /** The queue registered under `name`; throws when there is none, or it is partitioned (getPartitionedQueue). */
  getQueue<Data = unknown, Result = unknown>(name: string): Queue<Data, Result> {
    const queue = this.getAppQueue(name);
    if (queue instanceof PartitionedQueue) throw new RelqConfigError(msg.queueIsPartitioned(name));
    return queue as Queue<Data, Result>;
  }

  /** The partitioned queue registered under `name` (`registerQueue({ name, partitions })`); throws when there is none, or it is not partitioned. */
  getPartitionedQueue<Data = unknown, Result = unknown>(name: string): PartitionedQueue<Data, Result> {
    const queue = this.getAppQueue(name);
    if (!(queue instanceof PartitionedQueue)) throw new RelqConfigError(msg.queueNotPartitioned(name));
    return queue as PartitionedQueue<Data, Result>;
  }

  /** The queue registered under `name`, partitioned or not; throws when there is none. @internal */
  getAppQueue(name: string): AppQueue {
    const entry = this.queues.get(name);
    if (!entry) throw new RelqConfigError(msg.noSuchQueue(name, this.getQueueNames()));
    return entry.queue;
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

  /**
   * Sets the concurrency of the processors of `queueName` (for a batch processor, its batches
   * at once), checked as the `@Processor()` option (ValidationError: nothing changes). A
   * running loop uses it at once: raised, it leases into the new slots now; lowered, its
   * running handlers finish and it leases again once fewer run. Kept when the loop is stopped
   * and started again. Handlers' own `concurrency` still applies. Returns how many were set.
   */
  setConcurrency(queueName: string, concurrency: number): number {
    const runners = this.select(queueName);
    for (const r of runners) r.checkConcurrency(concurrency); // all or none
    for (const r of runners) r.setConcurrency(concurrency);
    return runners.length;
  }

  /**
   * Pauses the lease loops of `queueName` (all when omitted) in this app only: they lease
   * nothing until resumeWorkers(); their running handlers go on (heartbeated) and complete
   * normally. `queue.pause()` instead pauses the queue for every app. Resolves once no loop
   * leases; with `drain: true`, once their running handlers have finished too. Kept when a
   * loop is stopped and started again (it starts paused). Returns how many were paused.
   */
  async pauseWorkers(queueName?: string, opts: PauseOptions = {}): Promise<number> {
    assertPauseOptions(opts);
    const runners = this.select(queueName);
    await Promise.all(runners.map((r) => r.pause(opts)));
    return runners.length;
  }

  /** Resumes the loops of `queueName` (all when omitted) paused by pauseWorkers(): they lease at once. */
  resumeWorkers(queueName?: string): number {
    const runners = this.select(queueName);
    for (const r of runners) r.resume();
    return runners.length;
  }

  /** Runs one sweep of `queueName` now, outside the schedule; the sweeper's status records it. */
  sweep(queueName: string, opts: { limit?: number } = {}): Promise<SweepResult> {
    const queue = this.getAppQueue(queueName);
    const sweeper = this.sweepers.get(queueName);
    if (!sweeper) return queue.sweep(opts); // before bootstrap
    return sweeper.runOnce(opts);
  }

  // ---- queues made at run time -----------------------------------------------------------------

  /**
   * Adds the queue `name` now (e.g. one per tenant): checked first (nothing is created when
   * the name is taken, `AlreadyRegisteredError`, or an option is wrong, `RelqConfigError`),
   * with registerQueue's options over forRoot's, and run as a declared queue: swept, in the
   * health check and on the dashboard, closed on shutdown. Resolves once its sweeper and
   * schedulers started (at once before bootstrap, which starts them). With `partitions`, a
   * PartitionedQueue (docs/scale-out.md).
   */
  addQueue<Data = unknown, Result = unknown>(name: string, options: Omit<RegisterQueueOptions, 'name'> & { partitions: number }): Promise<PartitionedQueue<Data, Result>>;
  addQueue<Data = unknown, Result = unknown>(name: string, options?: Omit<RegisterQueueOptions, 'name' | 'partitions'> & { partitions?: undefined }): Promise<Queue<Data, Result>>;
  addQueue<Data = unknown, Result = unknown>(name: string, options?: Omit<RegisterQueueOptions, 'name'>): Promise<Queue<Data, Result> | PartitionedQueue<Data, Result>>;
  addQueue<Data = unknown, Result = unknown>(name: string, options: Omit<RegisterQueueOptions, 'name'> = {}): Promise<Queue<Data, Result> | PartitionedQueue<Data, Result>> {
    return this.bound().addQueue(name, options) as Promise<Queue<Data, Result> | PartitionedQueue<Data, Result>>;
  }

  /**
   * Consumes `queueName` (a queue added with addQueue) with `handler`, a function taking every
   * job, or an instance of an undecorated class with `@Process()` methods (or extending
   * `WorkerHost`) and `@OnWorkerEvent()` methods, checked as a `@Processor()` class is. Its lease
   * loop has @Processor's options and defaults, starts at once (unless `workers.enabled` is
   * false) and drains on removeQueue() and on shutdown.
   */
  addProcessor<Data = unknown, Result = unknown>(
    queueName: string,
    handler: ((job: Job<Data>) => Result | Promise<Result>) | object,
    options: Omit<ProcessorOptions, 'scope' | 'durable'> = {},
  ): Promise<void> {
    return this.bound().addProcessor(queueName, handler, options);
  }

  /**
   * Calls the `@OnQueueEvent()` methods of `instance` (an undecorated class) with the events
   * of `queueName` (a queue added with addQueue) from every process, until it is removed.
   */
  addQueueListener(queueName: string, instance: object): Promise<void> {
    return this.bound().addQueueListener(queueName, instance);
  }

  /**
   * Removes a queue added with addQueue: its lease loop stops leasing and running handlers get
   * `drainTimeoutMs` (default: the processor's) to finish, then their jobs go back to pending
   * at once (`drain: false`: at once); its sweeper, schedulers and listeners stop, and its Queue
   * closes (adds waiting for room fail with ClosedError). Its jobs stay in Redis.
   */
  removeQueue(name: string, options: { drain?: boolean; drainTimeoutMs?: number } = {}): Promise<void> {
    return this.bound().removeQueue(name, options);
  }

  /**
   * Calls `listener` with every queue of the app now (`added`), then with each one added or
   * removed (`removed` comes before the Queue closes), e.g. to watch their gauges with
   * RelqMetrics. Returns the function that stops the calls.
   */
  watchQueues(listener: (change: { type: 'added' | 'removed'; queue: Queue<unknown, unknown> | PartitionedQueue<unknown, unknown> }) => void): () => void {
    for (const { queue } of this.queues.values()) listener({ type: 'added', queue });
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private bound(): QueueRuntime {
    if (!this.runtime) throw new RelqConfigError(msg.runtimeNotReady());
    return this.runtime;
  }

  private select(queueName: string | undefined): ProcessorRunner[] {
    if (queueName !== undefined) this.getAppQueue(queueName); // throws for an unknown name
    return this.runners.filter((r) => queueName === undefined || r.def.queueName === queueName);
  }

  // ---- what the module's providers, the orchestrator and the health check use ----------------

  /** @internal */
  bindRuntime(runtime: QueueRuntime): void {
    this.runtime = runtime;
  }

  /**
   * The queue for `options.name`, created on first registration: the engine's Queue checks
   * its options, and its warnings (eviction policy, ghost ids) go to the app's log. A queue
   * added at run time (`runtime`) takes a name no queue has. @internal
   */
  declareQueue(options: ResolvedQueueOptions, runtime = false): AppQueue {
    const signature = signatureOf(options);
    const existing = this.queues.get(options.name);
    if (existing) {
      if (runtime) throw new AlreadyRegisteredError(msg.queueTaken(options.name));
      if (existing.signature !== signature) throw new RelqConfigError(msg.registeredTwice(options.name));
      return existing.queue;
    }
    const where = runtime ? msg.addQueueWhere(options.name) : msg.queueWhere(options.name);
    const queue = validating(where, (): AppQueue => {
      const { partitions, ...engine } = options.engine;
      const common = { ...engine, connection: options.connection ?? this.connection.client, onWarning: (w: { message: string }) => this.logger.warn(w.message) };
      return partitions === undefined ? new Queue<unknown, unknown>(options.name, common) : new PartitionedQueue<unknown, unknown>(options.name, { ...common, partitions });
    });
    this.queues.set(options.name, { queue, options, runtime, signature });
    this.tell({ type: 'added', queue });
    return queue;
  }

  /**
   * Forgets a queue added at run time, with its loop and sweeper (the caller stopped them),
   * telling the watchers before it closes the Queue. @internal
   */
  async forgetQueue(name: string): Promise<void> {
    const entry = this.queues.get(name);
    if (!entry) return;
    this.tell({ type: 'removed', queue: entry.queue });
    await entry.queue.close().catch(() => undefined);
    this.queues.delete(name);
    this.sweepers.delete(name);
    for (let i = this.runners.length - 1; i >= 0; i--) if (this.runners[i]!.def.queueName === name) this.runners.splice(i, 1);
  }

  private tell(change: QueueChange): void {
    for (const watcher of this.watchers) {
      try {
        watcher(change);
      } catch (err) {
        this.logger.error(msg.watcherThrew(change.type, change.queue.name, msg.textOf(err)));
      }
    }
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
