import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Type } from '@nestjs/common';
import type { ConnectionInput, DurabilityOptions, EvictionCheck, ExclusiveOptions, JobPolicyOptions } from '../../core/types.js';

/** Lease-loop settings shared by every processor unless its `@Processor()` says otherwise. */
export interface ProcessorDefaults {
  /** Default `concurrency` of each `@Process()` handler. Default 1. */
  concurrency?: number;
  /** Lease length for jobs without their own `leaseMs`; the heartbeat renews it at about half. Default 30 000. */
  leaseMs?: number;
  /** Longest single blocking wait on an empty queue. Default 5 000. */
  blockMs?: number;
  /** Renew leases of running handlers automatically. Default true. */
  heartbeat?: boolean;
}

/** Job and processor defaults. */
export interface QueueDefaults {
  /** Job policy for jobs added without their own (attempts, backoff, leaseMs, retention). */
  job?: JobPolicyOptions;
  processor?: ProcessorDefaults;
}

/** The periodic `queue.sweep()` of each registered queue. */
export interface SweeperOptions {
  /** Default true. API-only instances may sweep too: it is safe from many processes. */
  enabled?: boolean;
  /** Average time between sweeps. Default 5 000. */
  intervalMs?: number;
  /** Random spread of each interval, 0 to 1: 0.2 waits intervalMs × [0.8, 1.2]. Default 0.2. */
  jitter?: number;
  /** Bound of each kind of work done by one sweep. Default 1 000. */
  limit?: number;
}

export interface ShutdownOptions {
  /**
   * On app.close(): how long running handlers may finish before their jobs are given back
   * to pending (at once, no failed attempt) and their `job.signal` aborts. Default 10 000.
   */
  drainTimeoutMs?: number;
}

export interface WorkersOptions {
  /** false: no lease loop starts (an API-only instance); producers, sweeper and health still work. Default true. */
  enabled?: boolean;
}

/** Limits above which the health check reports a queue down. */
export interface HealthThresholds {
  /** Most pending jobs (backlog) considered healthy. Default: no limit. */
  maxPending?: number;
  /** Most dead letters considered healthy. Default: no limit. */
  maxDead?: number;
}

export interface HealthOptions extends HealthThresholds {
  /** Redis PING time limit. Default 2 000. */
  timeoutMs?: number;
  /** A lease loop that has neither made progress nor started a wait for this long is wedged. Default blockMs + 10 000. */
  loopStallMs?: number;
  /** A sweeper whose last successful run is older than this is down. Default 3 × intervalMs + 5 000. */
  sweeperStaleMs?: number;
}

/** `QueueModule.forRoot()` options. Every field is optional. */
export interface QueueModuleOptions {
  /**
   * A redis:// URL, ioredis options, or a client you own (relq never closes it). relq opens
   * one shared command connection from it for all producers, plus one blocking connection
   * per running processor. Default 127.0.0.1:6379.
   */
  connection?: ConnectionInput;
  /** Key prefix of every queue. Default 'relq'. */
  prefix?: string;
  defaults?: QueueDefaults;
  /** Largest JSON payload or result accepted, in bytes. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** Publish job transitions (queue.events(), watch(), waitForResult()). Default true. */
  events?: boolean;
  /**
   * When Redis may evict keys (maxmemory-policy not noeviction): 'warn' once in the log
   * (default), 'error' (every call fails with ServerConfigError), 'off' (no check).
   */
  evictionCheck?: EvictionCheck;
  /** Periodic sweeping; `false` turns it off. */
  sweeper?: SweeperOptions | false;
  shutdown?: ShutdownOptions;
  workers?: WorkersOptions;
  health?: HealthOptions;
}

/** `QueueModule.registerQueue()` options: one queue, overriding the root options. */
export interface RegisterQueueOptions {
  name: string;
  /** A separate Redis for this queue (one more command connection). Default: the shared one. */
  connection?: ConnectionInput;
  prefix?: string;
  defaults?: QueueDefaults;
  maxPayloadBytes?: number;
  events?: boolean;
  sweeper?: SweeperOptions | false;
  health?: HealthThresholds;
  /**
   * Bounded queue: at most this many unfinished jobs (pending + working + delayed). `add()`
   * on a full queue waits for room (its `timeoutMs` ends the wait with QueueFullError);
   * `tryAdd()` fails at once. Stored in Redis, last writer wins; `0` removes a stored bound.
   * Give every app that produces to the queue the same value. Default: unbounded.
   */
  bound?: number;
  /** Count produced and consumed messages and bytes (`queue.stats()`, health details). Default false. */
  stats?: boolean;
  /** Fair groups: at most this many jobs of one `group` leased at once (stored in Redis; `0` removes it). */
  groupConcurrency?: number;
  /** Exclusive producer and/or consumer role of this app's Queue object (QueueInUseError for a second one). */
  exclusive?: ExclusiveOptions;
  /**
   * Adds read the queue's state and fail with QueueClosedError once it is closed. Default:
   * true with `bound`, `stats` or `exclusive.producer` (which need it; `false` is then an
   * error), else false.
   */
  checkClosed?: boolean;
  /**
   * The queue is open while this app runs: `reopenQueue()` at startup, `closeQueue()` on
   * shutdown (after the drain, before the connections close), so that consumers elsewhere
   * finish what is left and stop. For the queue's one producing app. Default false.
   */
  closeOnShutdown?: boolean;
  /** Overrides the root `evictionCheck` for this queue. */
  evictionCheck?: EvictionCheck;
  /** Adds and settles wait until this many replicas have them (WAIT); see docs/reliability.md. */
  durability?: DurabilityOptions;
}

/** A factory function's arguments come from `inject`; typed by the factory itself. */
export type FactoryFunction<T> = (...args: never[]) => T | Promise<T>;

export type FactoryInject = Array<InjectionToken | OptionalFactoryDependency>;

/** A class whose method builds the root options (for `useClass` / `useExisting`). */
export interface QueueModuleOptionsFactory {
  createRelqOptions(): QueueModuleOptions | Promise<QueueModuleOptions>;
}

/** `QueueModule.forRootAsync()` options: exactly one of useFactory, useClass, useExisting. */
export interface QueueModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory?: FactoryFunction<QueueModuleOptions>;
  inject?: FactoryInject;
  useClass?: Type<QueueModuleOptionsFactory>;
  useExisting?: Type<QueueModuleOptionsFactory>;
}

/** A class whose method builds one queue's options (for `useClass` / `useExisting`). */
export interface QueueOptionsFactory {
  createQueueOptions(name: string): Omit<RegisterQueueOptions, 'name'> | Promise<Omit<RegisterQueueOptions, 'name'>>;
}

/** `QueueModule.registerQueueAsync()` options: exactly one of useFactory, useClass, useExisting. */
export interface RegisterQueueAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  name: string;
  useFactory?: FactoryFunction<Omit<RegisterQueueOptions, 'name'>>;
  inject?: FactoryInject;
  useClass?: Type<QueueOptionsFactory>;
  useExisting?: Type<QueueOptionsFactory>;
}
