import type { LeaseRef } from '../leases/types.js';
import type { AddFlowOptions, FlowJob, FlowResult } from '../flows/types.js';
import type { JobProgress, QueueCounts, SweepResult } from '../management/read-types.js';
import type { LeaseStep } from '../leases/lease-step.js';
import type { SettleItem } from '../settles/settle-items.js';
import type { Touched } from '../settles/settling.js';
import type { CancelNotice } from '../worker/cancel-notices.js';
import type { WarningHandler } from '../warnings.js';

/**
 * What Worker, BatchWorker and the Nest runtime use of a Queue beyond its public API: the
 * lease call that also settles, settles and touches carrying request ids, blocking
 * connections, the sweep's stalled ids, the events' subscription, the cancel notices. Not on the
 * public Queue type (users never see it in autocomplete); reached with internalsOf().
 */
export interface QueueInternals<Data> {
  readonly name: string;
  readonly maxPayloadBytes: number;
  readonly isClosed: boolean;
  /** The queue's warning handler (QueueOptions.onWarning). */
  readonly warn: WarningHandler;
  /** `worker`: a worker's registration, '' none (lib/core/workers/presence.ts); also touchMany's. */
  leaseStep(items: SettleItem[], count: number, leaseMs: number, woken: boolean, reqId?: string, worker?: string): Promise<LeaseStep<Data>>;
  settle(items: SettleItem[], reqId?: string): Promise<boolean[]>;
  touchMany(leases: ReadonlyArray<LeaseRef>, extendMs?: number, worker?: string): Promise<Touched[]>;
  /** Blocks on the wake-up list for up to `ms` (lib/core/leases/leasing.ts). */
  waitForWork(wait: WorkWait, ms: number): Promise<boolean>;
  /** A handler's progress and log lines (lib/core/progress/progress.ts). */
  updateProgress(lease: LeaseRef, progress: JobProgress): Promise<boolean>;
  log(lease: LeaseRef, line: string): Promise<boolean>;
  /** A handler's change of its job's data, through its lease (lib/core/management/management.ts). */
  updateData(lease: LeaseRef, data: unknown): Promise<boolean>;
  /** A handler's children of its running job, through its lease (lib/core/flows/flows.ts). */
  addChildren(lease: LeaseRef, children: ReadonlyArray<FlowJob<unknown>>, opts: AddFlowOptions): Promise<FlowResult[]>;
  /** The results of a flow parent's completed children (lib/core/flows/flows.ts). */
  childrenResults(id: string): Promise<Record<string, unknown>>;
  /** `sweep()`, with the ids of the expired leases it returned (lib/core/management/inspector.ts). */
  sweepReporting(opts: { limit?: number }): Promise<{ result: SweepResult; stalledIds: string[] }>;
  /** counts() and the age of the oldest pending job, in one call (relq/metrics; lib/core/management/inspector.ts). */
  countsAndAge(): Promise<{ counts: QueueCounts; oldestPendingAgeMs: number | undefined }>;
  /** Listens to the leases cancel() ends (lib/core/worker/cancel-notices.ts); returns the end of it. */
  watchCancels(notice: (n: CancelNotice) => void, active: () => void): () => void;
  /** A worker's wait for work (a Blocker of its own for a queue, lib/core/redis/blocking-wait.ts). */
  openBlocker(): WorkWait;
  closeBlocker(wait: WorkWait): void;
}

/** A worker's wait for work, which pause() cuts short; closed with closeBlocker(). */
export interface WorkWait {
  interrupt(): void;
}

/** Queue objects that went through their constructor, and their internals. */
const registry = new WeakMap<object, QueueInternals<unknown>>();

export function registerInternals(queue: object, internals: QueueInternals<unknown>): void {
  registry.set(queue, internals);
}

/** The internals of a Queue built by its constructor; undefined for anything else. */
export function internalsOf<Data>(queue: unknown): QueueInternals<Data> | undefined {
  return typeof queue === 'object' && queue !== null ? (registry.get(queue) as QueueInternals<Data> | undefined) : undefined;
}
