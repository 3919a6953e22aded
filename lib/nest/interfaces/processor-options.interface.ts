import type { Scope } from '@nestjs/common';

/** `@Processor(queue, options)`: the lease loop of one processor class. */
export interface ProcessorOptions {
  /**
   * Jobs leased and running at once across all handlers of the class. Default: the sum of
   * the handlers' own `concurrency`, so that every handler can run at its limit.
   */
  concurrency?: number;
  /** Lease length for jobs without their own `leaseMs`. Default from `defaults.processor`, else 30 000. */
  leaseMs?: number;
  /** Longest blocking wait on an empty queue. Default from `defaults.processor`, else 5 000. */
  blockMs?: number;
  /** Renew leases of running handlers at about half their length. Default true. */
  heartbeat?: boolean;
  /** Overrides `shutdown.drainTimeoutMs` for this processor. */
  drainTimeoutMs?: number;
  /** Nest scope of the class; REQUEST or TRANSIENT resolves a fresh instance per job. */
  scope?: Scope;
  /** Durable provider (with a ContextIdStrategy). */
  durable?: boolean;
}

/** `@Process({ batch })`: the method receives `Job[]`, leased and settled together. */
export interface BatchProcessOptions {
  /** Most jobs per batch, 1 to 1000. */
  size: number;
  /** After the first job of a batch, wait up to this long (ms) for the batch to fill. Default 0. */
  waitMs?: number;
}

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

/** Worker-local outcomes a processor can listen to with `@OnQueueEvent()`. */
export type ProcessorEventType = 'completed' | 'failed' | 'dead' | 'lost' | 'error';
