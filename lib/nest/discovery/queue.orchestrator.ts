import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { AppQueue } from '../queues/app-queue.js';
import type { ProcessorDefinition } from '../processors/processor-definition.js';
import { defaultLoopStallMs } from '../defaults.js';
import type { ResolvedRootOptions } from '../queues/root-options.js';
import { LOG_CONTEXT, RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import { ProcessorRunner } from '../processors/processor-runner.js';
import { QueueListener, type QueueListenerDefinition } from '../events/queue-listener.js';
import { QueueRegistry, type RegisteredQueue } from '../queues/queue.registry.js';
import { RelqConfigError } from '../errors.js';
import { QueueSweeper } from '../sweeper/queue-sweeper.js';
import { QueueSchedulers } from '../schedulers/queue-schedulers.js';
import { RelqConnection } from '../queues/relq-connection.js';
import { withTimeout } from '../with-timeout.js';

/** Longest wait for closeQueue() / reopenQueue() at shutdown / startup (Redis may be away). */
const LIFECYCLE_TIMEOUT_MS = 2000;
/** reopenQueue() at startup is retried with backoff up to this delay. */
const REOPEN_RETRY_MAX_MS = 5000;

/**
 * Runs what the queues need, in the app's lifecycle: lease loops (one ProcessorRunner per
 * processor class) and sweepers (one per queue), kept in the QueueRegistry. Reopens
 * `closeOnShutdown` queues in onModuleInit, starts loops and sweepers in
 * onApplicationBootstrap. In beforeApplicationShutdown it stops them (draining running
 * handlers, then queue listeners' running calls), closes `closeOnShutdown` queues, then
 * closes the Queue objects, which releases add() calls waiting for room on a full queue
 * (before the HTTP server waits for the requests making them). Closes the shared connection
 * in onApplicationShutdown.
 */
@Injectable()
export class QueueOrchestrator implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(LOG_CONTEXT);
  private readonly reopenTimers = new Map<NodeJS.Timeout, string>();
  // Nest may call a hook twice on one context (init() and listen(), say): each runs once.
  private opened = false;
  private bootstrapped = false;
  private stopping: Promise<void> | undefined;
  private shutDown = false;
  private readonly schedulers = new Map<string, QueueSchedulers>();
  private readonly declared = new Map<string, ProcessorDefinition['schedulers']>();
  private readonly queueListeners: QueueListener[] = [];
  /** Queues removeQueue() is stopping: their reopen retries end. */
  private readonly removed = new WeakSet<AppQueue>();

  constructor(
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
    private readonly registry: QueueRegistry,
    private readonly connection: RelqConnection,
  ) {}

  /** Called by the explorer with every discovered processor; starts nothing. */
  addProcessors(defs: ProcessorDefinition[]): void {
    for (const def of defs) {
      if (def.schedulers) this.declared.set(def.queueName, def.schedulers);
      this.registry.addRunner(this.runnerOf(def));
    }
  }

  private runnerOf(def: ProcessorDefinition): ProcessorRunner {
    const stallMs = this.options.health.loopStallMs ?? defaultLoopStallMs(def.settings.blockMs);
    return new ProcessorRunner(def, this.registry.getAppQueue(def.queueName), this.logger, stallMs);
  }

  /** Called by the explorer with every discovered `@QueueEventsListener()` class; starts nothing. */
  addQueueListeners(defs: QueueListenerDefinition[]): void {
    for (const def of defs) this.queueListeners.push(new QueueListener(def, this.registry.getAppQueue(def.queueName), this.logger));
  }

  /** `closeOnShutdown` queues are open while the app runs: reopened before anything starts. */
  async onModuleInit(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    await Promise.all(this.closeOnShutdownQueues().map((queue) => this.reopen(queue, 0)));
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.bootstrapped) return;
    this.bootstrapped = true;
    // Listeners first: the jobs the schedulers queue, the sweepers' first promotions and the
    // loops' first leases are heard from the start (scripts publish only while one listens).
    await Promise.all(this.queueListeners.map((l) => l.start()));
    for (const entry of this.registry.getEntries()) this.startSweeper(entry);
    for (const entry of this.registry.getEntries()) await this.startSchedulers(entry);
    const runners = this.registry.getRunners();
    if (!this.options.workersEnabled) {
      if (runners.length) this.logger.log(msg.loopsNotStarted(runners.length));
      return;
    }
    await Promise.all(runners.map((r) => r.start()));
  }

  /** One sweeper per queue (also for a queue added while bootstrap runs). */
  private startSweeper({ queue, options }: RegisteredQueue): void {
    if (this.registry.getSweeper(queue.name)) return;
    // The processor is looked up at each sweep: one added at run time hears its 'stalled' too.
    const stalled = (ids: string[]) => this.registry.getRunners().find((r) => r.def.queueName === queue.name)?.stalled(ids);
    const sweeper = new QueueSweeper(queue, options.sweeper, this.logger, stalled);
    this.registry.addSweeper(sweeper);
    sweeper.start();
  }

  private async startSchedulers({ queue, options }: RegisteredQueue): Promise<void> {
    if (this.schedulers.has(queue.name)) return;
    const declared = [...options.schedulers, ...(this.declared.get(queue.name) ?? [])];
    const s = new QueueSchedulers(queue, declared, options.schedulerOptions, this.logger);
    this.schedulers.set(queue.name, s);
    await s.start();
  }

  // ---- queues made at run time (QueueRegistry.addQueue, addProcessor, removeQueue) ----------

  /** Refuses what would start after shutdown began (it would be left running). */
  assertRunning(call: string): void {
    if (this.stopping || this.shutDown) throw new RelqConfigError(msg.appClosing(call));
  }

  /**
   * Starts what a queue added at run time needs, as bootstrap does for the declared ones: its
   * reopen (closeOnShutdown), sweeper and schedulers. Before bootstrap, bootstrap starts them.
   */
  async startQueue(name: string): Promise<void> {
    const entry = this.registry.getEntry(name)!;
    if (this.opened && entry.options.closeOnShutdown) await this.reopen(entry.queue, 0);
    if (!this.bootstrapped) return;
    this.startSweeper(entry);
    await this.startSchedulers(entry);
  }

  /** A processor added at run time: its loop starts now, or at bootstrap (unless workers are disabled). */
  async addRuntimeProcessor(def: ProcessorDefinition): Promise<void> {
    const runner = this.runnerOf(def);
    this.registry.addRunner(runner);
    if (this.bootstrapped && this.options.workersEnabled) await runner.start();
  }

  /** A queue-events listener added at run time: it subscribes now, or at bootstrap. */
  async addRuntimeListener(def: QueueListenerDefinition): Promise<void> {
    const listener = new QueueListener(def, this.registry.getAppQueue(def.queueName), this.logger);
    this.queueListeners.push(listener);
    if (this.bootstrapped) await listener.start();
  }

  /**
   * Stops one queue as shutdown stops them all (loop drained for up to `drainTimeoutMs`,
   * sweeper, schedulers, then listeners; closeQueue() when closeOnShutdown), then the registry
   * forgets it and closes its Queue.
   */
  async removeQueue(name: string, drainTimeoutMs: number | undefined): Promise<void> {
    const entry = this.registry.getEntry(name)!;
    this.removed.add(entry.queue);
    const runners = this.registry.getRunners().filter((r) => r.def.queueName === name);
    const schedulers = this.schedulers.get(name);
    await Promise.all([...runners.map((r) => r.stop(drainTimeoutMs)), this.registry.getSweeper(name)?.stop(), schedulers?.stop()]);
    const listeners = this.queueListeners.filter((l) => l.def.queueName === name);
    await Promise.all(listeners.map((l) => l.stop(drainTimeoutMs ?? this.options.drainTimeoutMs)));
    for (const [t, queueName] of this.reopenTimers) {
      if (queueName !== name) continue;
      clearTimeout(t);
      this.reopenTimers.delete(t);
    }
    if (entry.options.closeOnShutdown) await this.closeQueue(entry.queue);
    this.schedulers.delete(name);
    for (const l of listeners) this.queueListeners.splice(this.queueListeners.indexOf(l), 1);
    await this.registry.forgetQueue(name);
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
    await this.registry.closeQueues();
    await this.connection.close();
  }

  private async stopAll(): Promise<void> {
    for (const t of this.reopenTimers.keys()) clearTimeout(t);
    this.reopenTimers.clear();
    // 1. No more leases; running handlers drain (they may still add jobs, also to full queues).
    await Promise.all([...this.registry.getRunners().map((r) => r.stop()), ...this.registry.getQueueSweepers().map((s) => s.stop()), ...[...this.schedulers.values()].map((s) => s.stop())]);
    // After the drain, so that the last outcomes are heard; before the queues close, which
    // the running listener methods may still use.
    await Promise.all(this.queueListeners.map((l) => l.stop(this.options.drainTimeoutMs)));
    // 2. closeOnShutdown: the queue takes no more jobs; consumers elsewhere drain it and stop.
    await Promise.all(this.closeOnShutdownQueues().map((queue) => this.closeQueue(queue)));
    // 3. Closing the Queue objects releases add() calls still waiting for room (ClosedError),
    //    so that nothing (an HTTP request blocked in add(), say) holds up the rest of app.close().
    await this.registry.closeQueues();
  }

  private closeOnShutdownQueues(): Array<AppQueue> {
    return this.registry
      .getEntries()
      .filter((e) => e.options.closeOnShutdown)
      .map((e) => e.queue);
  }

  private async closeQueue(queue: AppQueue): Promise<void> {
    try {
      const closed = await withTimeout(queue.closeQueue(), LIFECYCLE_TIMEOUT_MS, 'closeQueue()');
      this.logger.log(msg.queueClosed(queue.name, closed));
    } catch (err) {
      this.logger.warn(msg.closeFailed(queue.name, msg.textOf(err)));
    }
  }

  /** reopenQueue(), retried in the background while Redis cannot be reached. */
  private async reopen(queue: AppQueue, attempt: number): Promise<void> {
    if (this.stopping || this.removed.has(queue)) return;
    try {
      const reopened = await withTimeout(queue.reopenQueue(), LIFECYCLE_TIMEOUT_MS, 'reopenQueue()');
      if (reopened || attempt > 0) this.logger.log(msg.queueReopened(queue.name, reopened));
    } catch (err) {
      if (this.stopping || this.removed.has(queue)) return;
      if (attempt === 0) this.logger.warn(msg.reopenFailed(queue.name, msg.textOf(err)));
      const timer = setTimeout(
        () => {
          this.reopenTimers.delete(timer);
          void this.reopen(queue, attempt + 1);
        },
        Math.min(REOPEN_RETRY_MAX_MS, 250 * 2 ** attempt),
      );
      timer.unref();
      this.reopenTimers.set(timer, queue.name);
    }
  }
}
