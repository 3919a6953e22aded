import { DEFAULT_POLICY, MAX_PAYLOAD_LIMIT, MAX_TIMER_MS } from '../../core/defaults.js';
import { assertConnection } from '../../core/redis/connection.js';
import { assertEvictionCheck } from '../../core/redis/server-check.js';
import { policyOver } from '../../core/adds/job-options.js';
import type { JobPolicy } from '../../core/adds/types.js';
import type { QueueOptions } from '../../core/queue/types.js';
import type { ConnectionInput } from '../../core/redis/types.js';
import { assertBoolean, assertInt, assertOptions, assertPrefix } from '../../core/validate.js';
import { validating } from '../errors.js';
import { FOR_ROOT_OPTIONS } from '../relq.messages.js';
import type { AsyncOptions } from './async-options.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../../core/defaults.js';
import { resolveHealth, type HealthOptions, type ResolvedHealth } from '../health/health-options.js';
import { optionKeys } from '../option-keys.js';
import type { ProcessorDefaults } from '../processors/processor-options.js';
import { checkDefaults, type QueueDefaults } from './queue-defaults.js';
import { DEFAULT_SWEEPER, resolveSweeper, type ResolvedSweeper, type SweeperOptions } from '../sweeper/sweeper-options.js';

export interface ShutdownOptions {
  /**
   * On app.close(): how long running handlers may finish before their jobs are given back
   * to pending (at once, no failed attempt) and their `job.signal` aborts; then how long
   * running `@OnWorkerEvent()` and `@OnQueueEvent()` calls may finish before the queues
   * close. Default 10 000.
   */
  drainTimeoutMs?: number;
}

export interface WorkersOptions {
  /** false: no lease loop starts (an API-only instance); producers, sweeper and health still work. Default true. */
  enabled?: boolean;
}

/** The engine's queue options that forRoot sets for every queue (registerQueue may override each). */
export type RootQueueOptions = Pick<QueueOptions, 'prefix' | 'maxPayloadBytes' | 'events' | 'evictionCheck'>;

/** `QueueModule.forRoot()` options. Every field is optional. */
export interface QueueModuleOptions extends RootQueueOptions {
  /**
   * A redis:// URL, ioredis options, or a client you own (relq never closes it). relq opens
   * one shared command connection from it for all producers, plus one blocking connection
   * per running processor. Default 127.0.0.1:6379.
   */
  connection?: ConnectionInput;
  defaults?: QueueDefaults;
  /** Periodic sweeping; `false` turns it off. */
  sweeper?: SweeperOptions | false;
  shutdown?: ShutdownOptions;
  workers?: WorkersOptions;
  health?: HealthOptions;
}

/** A class whose method builds the root options (for `useClass` / `useExisting`). */
export interface QueueModuleOptionsFactory {
  createRelqOptions(): QueueModuleOptions | Promise<QueueModuleOptions>;
}

/** `QueueModule.forRootAsync()` options: exactly one of useFactory, useClass, useExisting. */
export interface QueueModuleAsyncOptions extends AsyncOptions<QueueModuleOptions, QueueModuleOptionsFactory> {}

export interface ResolvedRootOptions {
  connection: ConnectionInput | undefined;
  /** Checked here so that a mistake names forRoot; each Queue checks what it gets again. */
  engine: RootQueueOptions;
  /** forRoot's job policy, resolved (undefined: the built-in one). */
  jobDefaults: Readonly<JobPolicy> | undefined;
  processorDefaults: ProcessorDefaults;
  sweeper: ResolvedSweeper;
  drainTimeoutMs: number;
  workersEnabled: boolean;
  health: ResolvedHealth;
}

const ROOT_KEYS = optionKeys<QueueModuleOptions>({
  connection: true,
  prefix: true,
  defaults: true,
  maxPayloadBytes: true,
  events: true,
  evictionCheck: true,
  sweeper: true,
  shutdown: true,
  workers: true,
  health: true,
});

export function resolveRootOptions(raw: QueueModuleOptions | undefined | null): ResolvedRootOptions {
  return validating(FOR_ROOT_OPTIONS, () => {
    const o = raw ?? {};
    assertOptions('options', o, ROOT_KEYS);
    assertConnection('connection', o.connection);
    const { prefix, maxPayloadBytes, events, evictionCheck } = o;
    if (prefix !== undefined) assertPrefix(prefix);
    const defaults = checkDefaults(o.defaults);
    // The engine checks maxPayloadBytes in each Queue but exports no check of it alone.
    if (maxPayloadBytes !== undefined) assertInt('maxPayloadBytes', maxPayloadBytes, { min: 1, max: MAX_PAYLOAD_LIMIT });
    if (events !== undefined) assertBoolean('events', events);
    assertEvictionCheck(evictionCheck);
    const sweeper = resolveSweeper(o.sweeper, DEFAULT_SWEEPER);
    let drainTimeoutMs = DEFAULT_DRAIN_TIMEOUT_MS;
    if (o.shutdown !== undefined) {
      assertOptions('shutdown', o.shutdown, optionKeys<ShutdownOptions>({ drainTimeoutMs: true }));
      if (o.shutdown.drainTimeoutMs !== undefined) {
        assertInt('shutdown.drainTimeoutMs', o.shutdown.drainTimeoutMs, { max: MAX_TIMER_MS });
        drainTimeoutMs = o.shutdown.drainTimeoutMs;
      }
    }
    let workersEnabled = true;
    if (o.workers !== undefined) {
      assertOptions('workers', o.workers, optionKeys<WorkersOptions>({ enabled: true }));
      if (o.workers.enabled !== undefined) assertBoolean('workers.enabled', o.workers.enabled);
      workersEnabled = o.workers.enabled ?? true;
    }
    return {
      connection: o.connection,
      engine: { prefix, maxPayloadBytes, events, evictionCheck },
      jobDefaults: defaults.job && policyOver(DEFAULT_POLICY, defaults.job),
      processorDefaults: defaults.processor,
      sweeper,
      drainTimeoutMs,
      workersEnabled,
      health: resolveHealth(o.health),
    };
  });
}
