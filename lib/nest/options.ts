import { assertConnection } from '../core/redis/connection.js';
import { assertDurability } from '../core/redis/replication.js';
import { assertEvictionCheck, type EvictionCheck } from '../core/redis/server-check.js';
import { DEFAULT_LEASE_MS, DEFAULT_SWEEP_LIMIT, MAX_BATCH_CONCURRENCY, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../core/defaults.js';
import { RelqError, ValidationError } from '../core/errors.js';
import { assertCheckClosed } from '../core/queue/queue-settings.js';
import type { ConnectionInput, JobPolicyOptions, QueueOptions } from '../core/types.js';
import { assertInt, assertNumber, assertOptions, assertPrefix, assertQueueName } from '../core/validate.js';
import { RelqConfigError } from './errors.js';
import type {
  HealthThresholds,
  ProcessorDefaults,
  QueueDefaults,
  QueueModuleOptions,
  RegisterQueueOptions,
  SweeperOptions,
} from './interfaces/module-options.interface.js';
import type { ProcessOptions, ProcessorOptions } from './interfaces/processor-options.interface.js';

// Validation and defaults of every option the Nest layer accepts, so that a typo or an
// out-of-range value stops the app at startup with the option's path in the message.

export interface ResolvedSweeper {
  enabled: boolean;
  intervalMs: number;
  jitter: number;
  limit: number;
}

export interface ResolvedHealth extends HealthThresholds {
  timeoutMs: number;
  loopStallMs?: number;
  sweeperStaleMs?: number;
}

export interface ResolvedRootOptions {
  connection: ConnectionInput | undefined;
  prefix: string | undefined;
  jobDefaults: JobPolicyOptions | undefined;
  processorDefaults: ProcessorDefaults;
  maxPayloadBytes: number | undefined;
  events: boolean | undefined;
  evictionCheck: EvictionCheck | undefined;
  sweeper: ResolvedSweeper;
  drainTimeoutMs: number;
  workersEnabled: boolean;
  health: ResolvedHealth;
}

export interface ResolvedQueueOptions {
  name: string;
  /** reopenQueue() at startup, closeQueue() on shutdown. */
  closeOnShutdown: boolean;
  /** What the engine's Queue constructor gets, minus the connection. */
  engine: Omit<QueueOptions, 'connection'>;
  /** A connection of its own, instead of the shared one. */
  connection: ConnectionInput | undefined;
  processorDefaults: ProcessorDefaults;
  sweeper: ResolvedSweeper;
  health: HealthThresholds;
}

export interface ResolvedWorkerSettings {
  concurrency: number;
  leaseMs: number;
  blockMs: number;
  heartbeat: boolean;
  drainTimeoutMs: number;
}

export const DEFAULT_SWEEP_INTERVAL_MS = 5000;
export const DEFAULT_SWEEP_JITTER = 0.2;
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
export const DEFAULT_BLOCK_MS = 5000;
export const DEFAULT_HEALTH_TIMEOUT_MS = 2000;

const ROOT_KEYS = ['connection', 'prefix', 'defaults', 'maxPayloadBytes', 'events', 'evictionCheck', 'sweeper', 'shutdown', 'workers', 'health'];
const QUEUE_KEYS = [
  'name',
  'connection',
  'prefix',
  'defaults',
  'maxPayloadBytes',
  'events',
  'sweeper',
  'health',
  'bound',
  'stats',
  'groupConcurrency',
  'exclusive',
  'checkClosed',
  'closeOnShutdown',
  'evictionCheck',
  'durability',
];
const EXCLUSIVE_KEYS = ['producer', 'consumer', 'waitMs', 'ttlMs'];
const BATCH_KEYS = ['size', 'waitMs'];
const DEFAULTS_KEYS = ['job', 'processor'];
const PROCESSOR_DEFAULT_KEYS = ['concurrency', 'leaseMs', 'blockMs', 'heartbeat'];
const SWEEPER_KEYS = ['enabled', 'intervalMs', 'jitter', 'limit'];
const HEALTH_KEYS = ['timeoutMs', 'maxPending', 'maxDead', 'loopStallMs', 'sweeperStaleMs'];
const THRESHOLD_KEYS = ['maxPending', 'maxDead'];
const PROCESSOR_KEYS = ['concurrency', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'scope', 'durable'];
const PROCESS_KEYS = ['concurrency', 'batch'];

/** Runs `check`, turning the engine's validation errors into a config error naming `where`. */
export function validating<T>(where: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof RelqConfigError) throw err;
    // `where` already names the options object: "forRoot() options: unknown option 'x'", not "options: options: ..."
    if (err instanceof ValidationError && err.field === 'options') throw new RelqConfigError(`${where}: ${err.detail}`);
    if (err instanceof RelqError || err instanceof TypeError) throw new RelqConfigError(`${where}: ${err.message}`);
    throw err;
  }
}

export function resolveRootOptions(raw: QueueModuleOptions | undefined | null): ResolvedRootOptions {
  return validating('QueueModule.forRoot() options', () => {
    const o = raw ?? {};
    assertOptions('options', o, ROOT_KEYS);
    assertConnection('connection', o.connection);
    if (o.prefix !== undefined) assertPrefix(o.prefix);
    const defaults = checkDefaults('defaults', o.defaults);
    if (o.maxPayloadBytes !== undefined) assertInt('maxPayloadBytes', o.maxPayloadBytes, { min: 1, max: 512 * 1024 * 1024 });
    checkBoolean('events', o.events);
    assertEvictionCheck(o.evictionCheck);
    const sweeper = resolveSweeper('sweeper', o.sweeper, undefined);
    let drainTimeoutMs = DEFAULT_DRAIN_TIMEOUT_MS;
    if (o.shutdown !== undefined) {
      assertOptions('shutdown', o.shutdown, ['drainTimeoutMs']);
      if (o.shutdown.drainTimeoutMs !== undefined) {
        assertInt('shutdown.drainTimeoutMs', o.shutdown.drainTimeoutMs, { max: MAX_TIMER_MS });
        drainTimeoutMs = o.shutdown.drainTimeoutMs;
      }
    }
    let workersEnabled = true;
    if (o.workers !== undefined) {
      assertOptions('workers', o.workers, ['enabled']);
      checkBoolean('workers.enabled', o.workers.enabled);
      workersEnabled = o.workers.enabled ?? true;
    }
    const health: ResolvedHealth = { timeoutMs: DEFAULT_HEALTH_TIMEOUT_MS };
    if (o.health !== undefined) {
      assertOptions('health', o.health, HEALTH_KEYS);
      if (o.health.timeoutMs !== undefined) {
        assertInt('health.timeoutMs', o.health.timeoutMs, { min: 1, max: MAX_TIMER_MS });
        health.timeoutMs = o.health.timeoutMs;
      }
      for (const key of ['loopStallMs', 'sweeperStaleMs'] as const) {
        const v = o.health[key];
        if (v !== undefined) {
          assertInt(`health.${key}`, v, { min: 1, max: MAX_TIMER_MS });
          health[key] = v;
        }
      }
      Object.assign(health, checkThresholds('health', o.health));
    }
    return {
      connection: o.connection,
      prefix: o.prefix,
      jobDefaults: defaults.job,
      processorDefaults: defaults.processor ?? {},
      maxPayloadBytes: o.maxPayloadBytes,
      events: o.events,
      evictionCheck: o.evictionCheck,
      sweeper,
      drainTimeoutMs,
      workersEnabled,
      health,
    };
  });
}

export function resolveQueueOptions(raw: RegisterQueueOptions, root: ResolvedRootOptions): ResolvedQueueOptions {
  const name = (raw as { name?: unknown } | null)?.name;
  return validating(`registerQueue(${typeof name === 'string' ? `'${name}'` : '…'})`, () => {
    assertOptions('options', raw, QUEUE_KEYS);
    assertQueueName(raw.name, 'name');
    assertConnection('connection', raw.connection);
    const prefix = raw.prefix ?? root.prefix;
    if (raw.prefix !== undefined) assertPrefix(raw.prefix);
    const defaults = checkDefaults('defaults', raw.defaults);
    if (raw.maxPayloadBytes !== undefined) assertInt('maxPayloadBytes', raw.maxPayloadBytes, { min: 1, max: 512 * 1024 * 1024 });
    checkBoolean('events', raw.events);
    const engine: Omit<QueueOptions, 'connection'> = {};
    if (prefix !== undefined) engine.prefix = prefix;
    const job = root.jobDefaults || defaults.job ? { ...root.jobDefaults, ...defaults.job } : undefined;
    if (job) engine.defaults = job;
    const maxPayloadBytes = raw.maxPayloadBytes ?? root.maxPayloadBytes;
    if (maxPayloadBytes !== undefined) engine.maxPayloadBytes = maxPayloadBytes;
    const events = raw.events ?? root.events;
    if (events !== undefined) engine.events = events;
    assertEvictionCheck(raw.evictionCheck);
    const evictionCheck = raw.evictionCheck ?? root.evictionCheck;
    if (evictionCheck !== undefined) engine.evictionCheck = evictionCheck;
    if (raw.durability !== undefined) {
      assertDurability(raw.durability, undefined);
      engine.durability = { ...raw.durability };
    }
    checkQueueExtensions(raw, engine);
    checkBoolean('closeOnShutdown', raw.closeOnShutdown);
    let health: HealthThresholds = { maxPending: root.health.maxPending, maxDead: root.health.maxDead };
    if (raw.health !== undefined) {
      assertOptions('health', raw.health, THRESHOLD_KEYS);
      health = { ...health, ...checkThresholds('health', raw.health) };
    }
    return {
      name: raw.name,
      closeOnShutdown: raw.closeOnShutdown ?? false,
      engine,
      connection: raw.connection,
      processorDefaults: { ...root.processorDefaults, ...defaults.processor },
      sweeper: resolveSweeper('sweeper', raw.sweeper, root.sweeper),
      health,
    };
  });
}

/**
 * The lease-loop settings of one processor class, from its `@Processor()` options, the
 * queue's and root defaults, and its handlers' concurrency.
 */
export function resolveWorkerSettings(
  where: string,
  options: ProcessorOptions,
  handlerLimits: number[],
  queue: ResolvedQueueOptions,
  root: ResolvedRootOptions,
): ResolvedWorkerSettings {
  return validating(where, () => {
    const d = queue.processorDefaults;
    const sum = handlerLimits.reduce((a, b) => a + b, 0);
    const concurrency = options.concurrency ?? Math.min(sum, 1000);
    assertInt('concurrency', concurrency, { min: 1, max: 1000 });
    const settings: ResolvedWorkerSettings = {
      concurrency,
      leaseMs: options.leaseMs ?? d.leaseMs ?? DEFAULT_LEASE_MS,
      blockMs: options.blockMs ?? d.blockMs ?? DEFAULT_BLOCK_MS,
      heartbeat: options.heartbeat ?? d.heartbeat ?? true,
      drainTimeoutMs: options.drainTimeoutMs ?? root.drainTimeoutMs,
    };
    return settings;
  });
}

/** Checks `@Processor()` options (types and ranges; cross-checks come later). */
export function checkProcessorOptions(where: string, options: unknown): ProcessorOptions {
  return validating(where, () => {
    assertOptions('options', options, PROCESSOR_KEYS);
    const o = options as ProcessorOptions;
    if (o.concurrency !== undefined) assertInt('concurrency', o.concurrency, { min: 1, max: 1000 });
    if (o.leaseMs !== undefined) assertInt('leaseMs', o.leaseMs, { min: 10, max: 2 ** 41 });
    if (o.blockMs !== undefined) assertInt('blockMs', o.blockMs, { min: 10, max: MAX_TIMER_MS });
    if (o.drainTimeoutMs !== undefined) assertInt('drainTimeoutMs', o.drainTimeoutMs, { max: MAX_TIMER_MS });
    checkBoolean('heartbeat', o.heartbeat);
    checkBoolean('durable', o.durable);
    return o;
  });
}

export interface ResolvedBatch {
  size: number;
  waitMs: number;
}

/**
 * Checks `@Process()` options; returns the handler's concurrency limit (for a batch
 * handler: batches at once, `batchFallback` when not given) and its batch settings.
 */
export function checkProcessOptions(
  where: string,
  options: unknown,
  fallback: number | undefined,
  batchFallback: number | undefined,
): { concurrency: number; batch: ResolvedBatch | undefined } {
  return validating(where, () => {
    assertOptions('options', options, PROCESS_KEYS);
    const o = options as ProcessOptions;
    let batch: ResolvedBatch | undefined;
    if (o.batch !== undefined) {
      assertOptions('batch', o.batch, BATCH_KEYS);
      assertInt('batch.size', o.batch.size, { min: 1, max: MAX_LEASE_COUNT });
      const waitMs = o.batch.waitMs ?? 0;
      assertInt('batch.waitMs', waitMs, { max: MAX_TIMER_MS });
      batch = { size: o.batch.size, waitMs };
    }
    const c = o.concurrency ?? (batch ? batchFallback : fallback) ?? 1;
    assertInt('concurrency', c, { min: 1, max: batch ? MAX_BATCH_CONCURRENCY : 1000 });
    return { concurrency: c, batch };
  });
}

/**
 * Checks the bounded / fair / lifecycle / exclusive / stats options of a queue (the engine
 * checks them again) and copies them into the engine's options.
 */
function checkQueueExtensions(raw: RegisterQueueOptions, engine: Omit<QueueOptions, 'connection'>): void {
  if (raw.bound !== undefined) {
    assertInt('bound', raw.bound, { max: 2 ** 40 });
    engine.bound = raw.bound;
  }
  if (raw.stats !== undefined) {
    checkBoolean('stats', raw.stats);
    engine.stats = raw.stats;
  }
  if (raw.groupConcurrency !== undefined) {
    assertInt('groupConcurrency', raw.groupConcurrency, { max: 2 ** 31 });
    engine.groupConcurrency = raw.groupConcurrency;
  }
  const ex = raw.exclusive;
  if (ex !== undefined) {
    assertOptions('exclusive', ex, EXCLUSIVE_KEYS);
    checkBoolean('exclusive.producer', ex.producer);
    checkBoolean('exclusive.consumer', ex.consumer);
    if (ex.waitMs !== undefined) assertInt('exclusive.waitMs', ex.waitMs, { max: MAX_TIMER_MS });
    if (ex.ttlMs !== undefined) assertInt('exclusive.ttlMs', ex.ttlMs, { min: 30, max: MAX_TIMER_MS });
    engine.exclusive = { ...ex };
  }
  if (raw.checkClosed !== undefined) {
    checkBoolean('checkClosed', raw.checkClosed);
    assertCheckClosed(raw);
    engine.checkClosed = raw.checkClosed;
  }
}

function checkDefaults(field: string, d: QueueDefaults | undefined): QueueDefaults {
  if (d === undefined) return {};
  assertOptions(field, d, DEFAULTS_KEYS);
  if (d.job !== undefined) assertOptions(`${field}.job`, d.job, ['attempts', 'backoff', 'leaseMs', 'keepCompletedMs', 'dedupWindowMs']);
  if (d.processor !== undefined) {
    const p = d.processor;
    assertOptions(`${field}.processor`, p, PROCESSOR_DEFAULT_KEYS);
    if (p.concurrency !== undefined) assertInt(`${field}.processor.concurrency`, p.concurrency, { min: 1, max: 1000 });
    if (p.leaseMs !== undefined) assertInt(`${field}.processor.leaseMs`, p.leaseMs, { min: 10, max: 2 ** 41 });
    if (p.blockMs !== undefined) assertInt(`${field}.processor.blockMs`, p.blockMs, { min: 10, max: MAX_TIMER_MS });
    checkBoolean(`${field}.processor.heartbeat`, p.heartbeat);
  }
  return d;
}

function resolveSweeper(field: string, s: SweeperOptions | false | undefined, base: ResolvedSweeper | undefined): ResolvedSweeper {
  const out: ResolvedSweeper = base
    ? { ...base }
    : { enabled: true, intervalMs: DEFAULT_SWEEP_INTERVAL_MS, jitter: DEFAULT_SWEEP_JITTER, limit: DEFAULT_SWEEP_LIMIT };
  if (s === undefined) return out;
  if (s === false) return { ...out, enabled: false };
  assertOptions(field, s, SWEEPER_KEYS);
  checkBoolean(`${field}.enabled`, s.enabled);
  if (s.intervalMs !== undefined) assertInt(`${field}.intervalMs`, s.intervalMs, { min: 10, max: MAX_TIMER_MS });
  if (s.jitter !== undefined) assertNumber(`${field}.jitter`, s.jitter, 0, 1);
  if (s.limit !== undefined) assertInt(`${field}.limit`, s.limit, { min: 1, max: 100_000 });
  return {
    enabled: s.enabled ?? out.enabled,
    intervalMs: s.intervalMs ?? out.intervalMs,
    jitter: s.jitter ?? out.jitter,
    limit: s.limit ?? out.limit,
  };
}

function checkThresholds(field: string, t: HealthThresholds): HealthThresholds {
  const out: HealthThresholds = {};
  if (t.maxPending !== undefined) {
    assertInt(`${field}.maxPending`, t.maxPending);
    out.maxPending = t.maxPending;
  }
  if (t.maxDead !== undefined) {
    assertInt(`${field}.maxDead`, t.maxDead);
    out.maxDead = t.maxDead;
  }
  return out;
}

function checkBoolean(field: string, v: unknown): void {
  if (v !== undefined && typeof v !== 'boolean') {
    throw new ValidationError(field, `must be true or false, got ${typeof v}`);
  }
}
