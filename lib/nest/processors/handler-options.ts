import { DEFAULT_BATCH_WAIT_MS, DEFAULT_CONCURRENCY, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../../core/defaults.js';
import { assertInt, assertOptions } from '../../core/validate.js';
import { assertConcurrency } from '../../core/worker/loop-options.js';
import type { BatchWorkerOptions } from '../../core/worker/batch-worker.js';
import { optionKeys } from '../option-keys.js';

/** `@Process({ batch })`: the method receives `Job[]`, leased and settled together (the engine BatchWorker's `size` and `waitMs`). */
export interface BatchProcessOptions extends Pick<BatchWorkerOptions, 'size' | 'waitMs'> {}

/** `@Process(name?, options)`: one handler method. */
export interface ProcessOptions {
  /**
   * Jobs this handler runs at once. Default `defaults.processor.concurrency`, else 1.
   * For a batch handler: batches run at once (one lease loop and blocking connection
   * each), default the processor's `concurrency`, else 1.
   */
  concurrency?: number;
  /**
   * A batch handler: the method gets `Job[]` (up to `size`) and returns nothing (all
   * completed), one outcome per job (`{ ok: true, result? }` / `{ ok: false, error?, retry? }`),
   * or throws (every job of the batch fails). It must be the processor's only `@Process()`.
   */
  batch?: BatchProcessOptions;
}

export type ResolvedBatch = Required<BatchProcessOptions>;

export interface ResolvedHandlerOptions {
  /** Jobs at once; for a batch handler, batches at once. */
  concurrency: number;
  batch: ResolvedBatch | undefined;
}

const PROCESS_KEYS = optionKeys<ProcessOptions>({ concurrency: true, batch: true });
const BATCH_KEYS = optionKeys<BatchProcessOptions>({ size: true, waitMs: true });

/**
 * `@Process()` options, with the handler's concurrency when it gives none: `fallback` for a
 * handler of single jobs, `batchFallback` for a batch handler, else 1.
 */
export function resolveHandlerOptions(
  options: unknown,
  fallback: number | undefined,
  batchFallback: number | undefined,
): ResolvedHandlerOptions {
  assertOptions('options', options, PROCESS_KEYS);
  const o = options as ProcessOptions;
  let batch: ResolvedBatch | undefined;
  if (o.batch !== undefined) {
    assertOptions('batch', o.batch, BATCH_KEYS);
    assertInt('batch.size', o.batch.size, { min: 1, max: MAX_LEASE_COUNT });
    const waitMs = o.batch.waitMs ?? DEFAULT_BATCH_WAIT_MS;
    assertInt('batch.waitMs', waitMs, { max: MAX_TIMER_MS });
    batch = { size: o.batch.size, waitMs };
  }
  const concurrency = o.concurrency ?? (batch ? batchFallback : fallback) ?? DEFAULT_CONCURRENCY;
  assertConcurrency('concurrency', concurrency, batch !== undefined);
  return { concurrency, batch };
}
