import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RelqConfigError } from './errors.js';
import type { ResolvedRootOptions } from './options.js';
import type { ProcessorDefinition } from './processor-definition.js';
import { QueueStore } from './queue.store.js';
import { RelqConnection } from './relq-connection.js';
import { QueueSweeper } from './sweeper.js';
import { RELQ_RESOLVED_OPTIONS } from './tokens.js';
import { WorkerHost } from './worker-host.js';

/**
 * Owns what runs: lease loops (one WorkerHost per processor class) and sweepers (one per
 * queue). Starts them in onApplicationBootstrap, stops them in beforeApplicationShutdown
 * (draining running handlers), closes queues and the shared connection in
 * onApplicationShutdown. @internal
 */
@Injectable()
export class ProcessorOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('relq');
  private readonly hosts: WorkerHost[] = [];
  private readonly sweepers = new Map<string, QueueSweeper>();
  private bootstrapped = false;
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
      this.hosts.push(new WorkerHost(def, entry.queue, this.logger));
    }
  }

  getHosts(): readonly WorkerHost[] {
    return this.hosts;
  }

  getSweepers(): QueueSweeper[] {
    return [...this.sweepers.values()];
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
      if (this.hosts.length) {
        this.logger.log(`workers disabled: ${this.hosts.length} processor(s) not started (producers only)`);
      }
      return;
    }
    await Promise.all(this.hosts.map((h) => h.start()));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([
      ...this.hosts.map((h) => h.stop()),
      ...[...this.sweepers.values()].map((s) => s.stop()),
    ]);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.shutDown) return;
    this.shutDown = true;
    // In case beforeApplicationShutdown was skipped (e.g. an init failure).
    await this.beforeApplicationShutdown();
    await this.store.closeAll();
    await this.connection.close();
  }
}
