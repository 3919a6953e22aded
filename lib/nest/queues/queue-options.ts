import { DEFAULT_POLICY } from '../../core/defaults.js';
import { policyOver } from '../../core/adds/job-options.js';
import type { JobPolicy } from '../../core/adds/types.js';
import type { QueueOptions } from '../../core/queue/types.js';
import type { ConnectionInput } from '../../core/redis/types.js';
import { assertBoolean, assertOptions, assertQueueName } from '../../core/validate.js';
import { validating } from '../errors.js';
import { queueWhere } from '../relq.messages.js';
import type { AsyncOptions } from './async-options.js';
import { resolveThresholds, type HealthThresholds } from '../health/health-options.js';
import { optionKeys } from '../option-keys.js';
import type { ProcessorDefaults } from '../processors/processor-options.js';
import { checkDefaults, type QueueDefaults } from './queue-defaults.js';
import type { ResolvedRootOptions } from './root-options.js';
import { resolveSweeper, type ResolvedSweeper, type SweeperOptions } from '../sweeper/sweeper-options.js';
import { checkSchedulers, resolveSchedulerOptions, type QueueSchedulerOptions, type ResolvedSchedulerOptions, type SchedulerDeclaration } from '../schedulers/scheduler-options.js';

/**
 * `QueueModule.registerQueue()` options: one queue. Every engine queue option (`bound`,
 * `stats`, `metrics`, `groupConcurrency`, `exclusive`, `checkClosed`, `durability`, ...) but the two the
 * Nest layer supplies (`onWarning`: the app's log; `defaults`: job and processor defaults
 * here), each over the root's where forRoot has it too, plus the Nest ones below.
 */
export interface RegisterQueueOptions extends Omit<QueueOptions, 'onWarning' | 'defaults'> {
  name: string;
  /**
   * Makes it a partitioned queue of this many partitions, spread over a Cluster's masters
   * (docs/scale-out.md): inject it as `PartitionedQueue<Data>` (`@InjectQueue(name)`), look it
   * up with `getPartitionedQueue(name)`. Its processors, sweeper, schedulers, listeners and
   * health check work as a queue's; it is not on the dashboard yet.
   */
  partitions?: number;
  /** A separate Redis for this queue (one more command connection). Default: the shared one. */
  connection?: ConnectionInput;
  defaults?: QueueDefaults;
  sweeper?: SweeperOptions | false;
  health?: HealthThresholds;
  /**
   * The queue is open while this app runs: `reopenQueue()` at startup, `closeQueue()` on
   * shutdown (after the drain, before the connections close), so that consumers elsewhere
   * finish what is left and stop. For the queue's one producing app. Default false.
   */
  closeOnShutdown?: boolean;
  /** Job schedulers upserted at startup (docs/schedulers.md); `@Scheduled()` declares more. */
  schedulers?: SchedulerDeclaration[];
  /** Whether to remove undeclared schedulers, and this app's scheduler ticker. */
  schedulerOptions?: QueueSchedulerOptions;
}

/** A class whose method builds one queue's options (for `useClass` / `useExisting`). */
export interface QueueOptionsFactory {
  createQueueOptions(name: string): Omit<RegisterQueueOptions, 'name'> | Promise<Omit<RegisterQueueOptions, 'name'>>;
}

/** `QueueModule.registerQueueAsync()` options: exactly one of useFactory, useClass, useExisting. */
export interface RegisterQueueAsyncOptions extends AsyncOptions<Omit<RegisterQueueOptions, 'name'>, QueueOptionsFactory> {
  name: string;
}

export interface ResolvedQueueOptions {
  name: string;
  /** reopenQueue() at startup, closeQueue() on shutdown. */
  closeOnShutdown: boolean;
  /**
   * What the engine's Queue constructor gets (which checks it), minus the connection; its job
   * defaults resolved here, which the Queue takes as they are.
   */
  engine: Omit<QueueOptions, 'connection' | 'onWarning' | 'defaults'> & { defaults?: Readonly<JobPolicy>; partitions?: number };
  /** A connection of its own, instead of the shared one. */
  connection: ConnectionInput | undefined;
  processorDefaults: ProcessorDefaults;
  sweeper: ResolvedSweeper;
  health: HealthThresholds;
  schedulers: SchedulerDeclaration[];
  schedulerOptions: ResolvedSchedulerOptions;
}

const QUEUE_KEYS = optionKeys<RegisterQueueOptions>({
  name: true,
  partitions: true,
  connection: true,
  prefix: true,
  defaults: true,
  maxPayloadBytes: true,
  maxLogLines: true,
  events: true,
  sweeper: true,
  health: true,
  bound: true,
  stats: true,
  metrics: true,
  groupConcurrency: true,
  limiter: true,
  groupLimiter: true,
  globalConcurrency: true,
  groupOverrides: true,
  exclusive: true,
  checkClosed: true,
  closeOnShutdown: true,
  evictionCheck: true,
  durability: true,
  schedulers: true,
  schedulerOptions: true,
});

/**
 * One queue's options over the root's. Only what the Nest layer adds is checked here; the
 * engine options are checked by the Queue made from them (QueueRegistry.addQueue).
 */
export function resolveQueueOptions(
  raw: RegisterQueueOptions,
  root: ResolvedRootOptions,
  where = queueWhere((raw as { name?: unknown } | null)?.name),
): ResolvedQueueOptions {
  return validating(where, () => {
    assertOptions('options', raw, QUEUE_KEYS);
    assertQueueName(raw.name, 'name');
    const { name, connection, defaults, sweeper, health, closeOnShutdown, schedulers, schedulerOptions, ...own } = raw;
    const checked = checkDefaults(defaults);
    if (closeOnShutdown !== undefined) assertBoolean('closeOnShutdown', closeOnShutdown);
    const job = checked.job ? policyOver(root.jobDefaults ?? DEFAULT_POLICY, checked.job) : root.jobDefaults;
    return {
      name,
      closeOnShutdown: closeOnShutdown ?? false,
      engine: withoutUndefined({ ...root.engine, ...withoutUndefined(own), defaults: job }),
      connection,
      processorDefaults: { ...root.processorDefaults, ...checked.processor },
      sweeper: resolveSweeper(sweeper, root.sweeper),
      health: resolveThresholds(health, root.health),
      schedulers: checkSchedulers('schedulers', schedulers),
      schedulerOptions: resolveSchedulerOptions(schedulerOptions),
    };
  });
}

/** A queue's own `events: undefined` must not hide the root's `events: false`. */
function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
