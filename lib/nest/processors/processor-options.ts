import type { Scope } from '@nestjs/common';
import { DEFAULT_BLOCK_MS, MAX_LEASE_COUNT } from '../../core/defaults.js';
import { assertBoolean, assertOptions } from '../../core/validate.js';
import type { WorkerEvent, WorkerOptions } from '../../core/worker/worker.js';
import { assertConcurrency, assertLoopOptions } from '../../core/worker/loop-options.js';
import { checkBackoffStrategies, type BackoffStrategies } from '../../core/worker/backoff-strategies.js';
import { assertSandboxOptions, handlerFileUrl, type HandlerFile, type SandboxOptions } from '../../core/worker/sandbox/options.js';
import { ValidationError } from '../../core/errors.js';
import { optionKeys } from '../option-keys.js';

/**
 * Lease-loop settings shared by every processor unless its `@Processor()` says otherwise:
 * the engine Worker's `leaseMs` (default 30 000), `blockMs` (default 5 000), `heartbeat`
 * (default true), `workerTtlMs` (default 60 000) and `appName` (default: the processor's
 * class name), the last two for `queue.getWorkers()`.
 */
export interface ProcessorDefaults extends Pick<WorkerOptions, 'leaseMs' | 'blockMs' | 'heartbeat' | 'appName' | 'workerTtlMs'> {
  /** Default `concurrency` of each `@Process()` handler. Default 1. */
  concurrency?: number;
}

/**
 * `@Processor(queue, options)`: the lease loop of one processor class, an engine Worker.
 * `leaseMs`, `blockMs` and `heartbeat` not given come from `defaults.processor` (of the
 * queue, then of the root); `drainTimeoutMs` from `shutdown.drainTimeoutMs`.
 */
export interface ProcessorOptions extends Omit<WorkerOptions, 'autostart'> {
  /**
   * Jobs leased and running at once across all handlers of the class. Default: the sum of
   * the handlers' own `concurrency`, so that every handler can run at its limit.
   */
  concurrency?: number;
  /** Nest scope of the class; REQUEST or TRANSIENT resolves a fresh instance per job. */
  scope?: Scope;
  /** Durable provider (with a ContextIdStrategy). */
  durable?: boolean;
  /**
   * A handler file (a module exporting the handler, docs/sandbox.md) that runs every job of
   * the queue in worker threads or child processes (`sandbox`). The class then has no
   * `@Process()` method; its `@OnWorkerEvent()` methods get the events as usual.
   */
  file?: HandlerFile;
}

/**
 * Worker-local events a processor can listen to with `@OnWorkerEvent()`: the engine Worker's
 * events but its own stop, and 'stalled' from this process's sweeper of the queue.
 */
export type ProcessorEventType = Exclude<WorkerEvent<unknown, unknown>['type'], 'stopped'> | 'stalled';

/** The same, for the explorer's check of `@OnWorkerEvent()` (the record makes the compiler ask for each). */
export const PROCESSOR_EVENT_TYPES = Object.keys({
  active: true,
  progress: true,
  stalled: true,
  completed: true,
  failed: true,
  dead: true,
  lost: true,
  cancelled: true,
  rateLimited: true,
  drained: true,
  error: true,
} satisfies Record<ProcessorEventType, true>) as ProcessorEventType[];

/** What the engine Worker (or BatchWorker) of one processor class is made with. */
export interface ResolvedWorkerSettings extends Required<Pick<WorkerOptions, 'concurrency' | 'blockMs' | 'drainTimeoutMs'>> {
  /** Left to the engine when nobody set it (the Worker applies DEFAULT_LEASE_MS). */
  leaseMs: number | undefined;
  /** Left to the engine when nobody set it. */
  heartbeat: boolean | undefined;
  /** The processor's backoff strategies (`@Processor(queue, { backoffStrategies })`), if any. */
  backoffStrategies: BackoffStrategies | undefined;
  /** Its handler file and sandbox, when it runs its jobs in one. */
  file: HandlerFile | undefined;
  sandbox: SandboxOptions | undefined;
  /** What `queue.getWorkers()` shows: the options', else the processor's class name. */
  appName: string;
  /** Left to the engine when nobody set it. */
  workerTtlMs: number | undefined;
}

const DEFAULTS_KEYS = optionKeys<ProcessorDefaults>({ concurrency: true, leaseMs: true, blockMs: true, heartbeat: true, appName: true, workerTtlMs: true });
const PROCESSOR_KEYS = optionKeys<ProcessorOptions>({
  concurrency: true,
  leaseMs: true,
  blockMs: true,
  heartbeat: true,
  drainTimeoutMs: true,
  backoffStrategies: true,
  appName: true,
  workerTtlMs: true,
  scope: true,
  durable: true,
  file: true,
  sandbox: true,
});

/** `defaults.processor` of forRoot or registerQueue (`field` names it). */
export function checkProcessorDefaults(field: string, d: ProcessorDefaults | undefined): ProcessorDefaults {
  if (d === undefined) return {};
  assertOptions(field, d, DEFAULTS_KEYS);
  checkLoopOptions(`${field}.`, d);
  return d;
}

/** `@Processor()` options (types and ranges; the explorer cross-checks them with the handlers'). */
export function checkProcessorOptions(options: unknown): ProcessorOptions {
  assertOptions('options', options, PROCESSOR_KEYS);
  const o = options as ProcessorOptions;
  checkLoopOptions('', o);
  if (o.backoffStrategies !== undefined) checkBackoffStrategies('backoffStrategies', o.backoffStrategies);
  if (o.durable !== undefined) assertBoolean('durable', o.durable);
  if (o.file !== undefined) handlerFileUrl('file', o.file);
  if (o.sandbox !== undefined) {
    if (o.file === undefined) throw new ValidationError('sandbox', 'applies to a handler file: give `file` too');
    assertSandboxOptions('sandbox', o.sandbox);
  }
  return o;
}

/**
 * The lease-loop settings of one processor class: its `@Processor()` options over the
 * `defaults.processor` its queue resolved, over the defaults (`appName`: the class's name).
 * `concurrency` is the class's
 * (for a batch processor, its batches at once), else the sum of its handlers'.
 */
export function resolveWorkerSettings(
  options: ProcessorOptions,
  handlerLimits: number[],
  defaults: ProcessorDefaults,
  drainTimeoutMs: number,
  className: string,
): ResolvedWorkerSettings {
  const sum = handlerLimits.reduce((a, b) => a + b, 0);
  return {
    concurrency: options.concurrency ?? Math.min(sum, MAX_LEASE_COUNT),
    leaseMs: options.leaseMs ?? defaults.leaseMs,
    blockMs: options.blockMs ?? defaults.blockMs ?? DEFAULT_BLOCK_MS,
    heartbeat: options.heartbeat ?? defaults.heartbeat,
    drainTimeoutMs: options.drainTimeoutMs ?? drainTimeoutMs,
    backoffStrategies: options.backoffStrategies,
    file: options.file,
    sandbox: options.sandbox,
    appName: options.appName ?? defaults.appName ?? className,
    workerTtlMs: options.workerTtlMs ?? defaults.workerTtlMs,
  };
}

/**
 * The options a processor and `defaults.processor` share, checked alike. The engine Worker
 * checks them again when a loop starts; here a bad value stops the app at startup, also
 * when workers are disabled, with the path of the option.
 */
function checkLoopOptions(prefix: string, o: ProcessorDefaults & Pick<ProcessorOptions, 'drainTimeoutMs'>): void {
  if (o.concurrency !== undefined) assertConcurrency(`${prefix}concurrency`, o.concurrency);
  assertLoopOptions(o, prefix);
}
