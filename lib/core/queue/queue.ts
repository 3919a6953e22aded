import type { Observable } from 'rxjs';
import type { RedisClient } from '../redis/connection.js';
import type { AddFlowOptions, DependencyPageOptions, FlowDependencies, FlowJob, FlowJobElsewhere, FlowNode, FlowResult, GetFlowOptions } from '../flows/types.js';
import type { AddResult, BulkJob, JobOptions } from '../adds/types.js';
import type { QueueEvent } from '../events/types.js';
import type { Lease, LeaseOptions, LeaseRef } from '../leases/types.js';
import type { JobProgress, JobState } from '../management/read-types.js';
import type { QueueOptions } from './types.js';
import { registerInternals } from './internals.js';
import { registerPartitionInternals } from '../partitions/partition-internals.js';
import { QueueAdmin } from './queue-admin.js';
import { buildQueueParts, queueInternals } from './queue-parts.js';

/**
 * A named work queue on Redis: the producer and lease-level consumer API. Every
 * state change is one Lua script; leases are fenced by tokens; time is Redis's.
 * This class is the public face; each part of the work lives in its own file of this folder
 * (queue-parts.ts lists them). Reads, job management, schedulers and the queue's shared
 * settings are in its base, QueueAdmin (queue-admin.ts).
 */
export class Queue<Data = unknown, Result = unknown> extends QueueAdmin<Data, Result> {
  constructor(name: string, options: QueueOptions = {}) {
    const parts = buildQueueParts<Data, Result>(name, options); // everything checked before anything connects
    super(parts);
    registerInternals(this, queueInternals(name, parts));
    if (parts.ctx.partition !== undefined) registerPartitionInternals(this, parts);
  }

  /** @internal The shared command connection (Nest health checks, the CLI, the dashboard, tests). */
  get client(): RedisClient {
    return this.parts.ctx.handle.client;
  }

  // ---- producing (producer.ts; bounded queues: backpressure.ts) -----------------

  /** Adds one job. With a `jobId` that exists, nothing is written and `created` is false. */
  async add(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.parts.producer.add(data, opts, 'wait');
  }

  /** Adds many jobs in one round trip and one atomic script. */
  addBulk(jobs: ReadonlyArray<BulkJob<Data>>, opts: { waitMs?: number } = {}): Promise<AddResult[]> {
    return this.parts.producer.addBulk(jobs, opts, 'wait');
  }

  /** Adds one job now or fails with QueueFullError when the (bounded) queue is full. Never waits. */
  async tryAdd(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.parts.producer.add(data, opts, 'try');
  }

  /** addBulk that fails at once with QueueFullError when the jobs do not all fit now. */
  tryAddBulk(jobs: ReadonlyArray<BulkJob<Data>>): Promise<AddResult[]> {
    return this.parts.producer.addBulk(jobs, {}, 'try');
  }

  /**
   * The id of the job that holds deduplication id `id` (JobOptions.deduplication), or null
   * when none does: never taken; in mode 'throttle' its window over (it holds the id for the
   * window whatever its job does, also once removed); in the other modes its job ended or
   * was removed.
   */
  getDeduplicationJobId(id: string): Promise<string | null> {
    return this.parts.producer.getDeduplicationJobId(id);
  }

  /**
   * Frees deduplication id `id` now: the next add that carries it creates a job. The job that
   * held it is left as it is; an add kept for its end (keepLastIfActive) is dropped. True when
   * a job held it.
   */
  removeDeduplicationKey(id: string): Promise<boolean> {
    return this.parts.producer.removeDeduplicationKey(id);
  }

  // ---- flows of parent and child jobs (flows.ts, docs/flows.md) -------------------

  /**
   * Adds a flow: a job and its children (each may have children of its own), in this queue
   * and the queues its jobs name (`queue`), in one atomic script: every job or none (a bad job anywhere is refused before
   * anything is written). A parent waits in the state 'waiting-children' until each child
   * completed, then becomes pending and reads their results (`job.childrenResults()`). A
   * child that dies fails its parent, or not (`onFailure` / `onChildFailure`: 'fail', 'ignore', 'continue', 'remove').
   * Throws CrossQueueFlowError on a Cluster for a job naming a queue of another slot, FlowJobExistsError when a
   * child's jobId exists; a root jobId that exists makes the whole flow a duplicate
   * (`created: false`, nothing written).
   */
  addFlow(flow: FlowJob<Data>, opts: AddFlowOptions = {}): Promise<FlowResult> {
    return this.parts.flows.addFlow(flow, opts);
  }

  /**
   * Children of the running job `lease` holds, each with its own children if any (a handler's
   * `job.addChildren()`; docs/flows.md): added in one atomic script fenced by the lease, all or
   * nothing, in this queue or in queues named by `queue` as in addFlow(). The job becomes their
   * parent: `waitForChildren(lease)` then ends its lease until they are done. A child whose
   * jobId exists is not added again (`created: false`), nor its children, so that a handler
   * run again after a crash adds nothing twice. Throws LeaseLostError, nothing written, once
   * the lease is lost.
   */
  addChildren(lease: LeaseRef, children: ReadonlyArray<FlowJob<Data> | FlowJobElsewhere>, opts: AddFlowOptions = {}): Promise<FlowResult[]> {
    return this.parts.flows.addChildren(lease, children, opts);
  }

  /**
   * Ends the lease of a job whose children (`addChildren()`) it now waits for: the job is in
   * 'waiting-children' until they are done, then pending again, its handler reading their
   * results with `childrenResults()`; with none unfinished it is pending at once. A child that
   * died meanwhile acts as in a flow (`onFailure`): the parent may die here. Not a failed
   * attempt. False for a stale lease.
   */
  async waitForChildren(lease: LeaseRef): Promise<boolean> {
    return this.parts.settling.waitForChildren(lease);
  }

  /** The results of a parent's completed children: child id → result (`null` for none). */
  childrenResults(id: string): Promise<Record<string, unknown>> {
    return this.parts.flows.childrenResults(id);
  }

  /**
   * A page of a flow parent's children, in the order the flow gave them, each with its queue
   * and state (null: gone); `total` counts them all. A job that is no parent has none.
   */
  getDependencies(id: string, opts: DependencyPageOptions = {}): Promise<FlowDependencies> {
    return this.parts.flows.getDependencies(id, opts);
  }

  /**
   * The flow below job `id` of this queue, across queues: each job with its queue, state and
   * number of children, `depth` levels deep (default 10), the first `maxChildren` children of
   * each parent (default 100). Null when there is no such job.
   */
  getFlow(id: string, opts: GetFlowOptions = {}): Promise<FlowNode | null> {
    return this.parts.flows.getFlow(id, opts);
  }

  // ---- leasing (leasing.ts) and settling (settling.ts) ---------------------------

  /**
   * Leases up to `count` jobs. With nothing pending it waits up to `blockMs` on a
   * wake-up list (no polling) and returns as soon as a job arrives or comes due.
   */
  async lease(opts: LeaseOptions = {}): Promise<Array<Lease<Data>>> {
    return this.parts.leasing.lease(opts);
  }

  /** Completes the job. True exactly once per job; false for a stale or repeated lease. */
  async ack(lease: LeaseRef, result?: Result): Promise<boolean> {
    return this.parts.settling.ack(lease, result);
  }

  /** Acks many leases in one round trip; returns which succeeded, in order. */
  async ackBatch(leases: ReadonlyArray<LeaseRef | { lease: LeaseRef; result?: Result }>): Promise<boolean[]> {
    return this.parts.settling.ackBatch(leases);
  }

  /** A failed attempt: retried after `delayMs` (default: the job's backoff) or dead-lettered. */
  async nack(lease: LeaseRef, opts: { error?: unknown; delayMs?: number } = {}): Promise<boolean> {
    return this.parts.settling.nack(lease, opts);
  }

  /** Puts the job back without counting a failure. */
  async requeue(lease: LeaseRef, opts: { delayMs?: number; reason?: string } = {}): Promise<boolean> {
    return this.parts.settling.requeue(lease, opts);
  }

  /**
   * The job met an upstream rate limit: back at the head of the queue without a failed
   * attempt, and its group (a grouped job) or its queue (`scope: 'queue'`, or an ungrouped
   * job) leases nothing for `delayMs` (docs/rate-limits.md). False for a stale lease.
   */
  async rateLimit(lease: LeaseRef, delayMs: number, opts: { scope?: 'auto' | 'queue' } = {}): Promise<boolean> {
    return this.parts.settling.rateLimit(lease, delayMs, opts);
  }

  /**
   * A step job (docs/handlers.md): ends the lease and delays the job until `runAt` (epoch ms
   * or a Date, Redis clock; a past time is due at once), without a failed attempt and with
   * everything of the job kept (change its data first: `updateData(lease, data)`). Publishes
   * 'delayed'. False for a stale lease.
   */
  async moveToDelayed(lease: LeaseRef, runAt: number | Date): Promise<boolean> {
    return this.parts.settling.delay(lease, { runAt });
  }

  /** moveToDelayed() `delayMs` from now, on Redis's clock. */
  async snooze(lease: LeaseRef, delayMs: number): Promise<boolean> {
    return this.parts.settling.delay(lease, { delayMs });
  }

  /** Dead-letters the job now, with no further attempts. */
  async reject(lease: LeaseRef, reason: unknown = 'rejected'): Promise<boolean> {
    return this.parts.settling.reject(lease, reason);
  }

  /** Extends the lease by `extendMs` from now (default: its own lease length). False once lost. */
  async touch(lease: LeaseRef, extendMs?: number): Promise<boolean> {
    return (await this.parts.settling.touchMany([lease], extendMs))[0] === 'held';
  }

  // ---- progress and logs of a leased job (progress.ts) ---------------------------

  /**
   * Stores the leased job's progress (a number or a JSON object or array), shown by getJob()
   * and published as a 'progress' event. False once the lease is lost: a stale lease writes
   * nothing.
   */
  async updateProgress(lease: LeaseRef, progress: JobProgress): Promise<boolean> {
    return this.parts.progress.updateProgress(lease, progress);
  }

  /**
   * Appends a line to the leased job's log (the last `maxLogLines` are kept), shown by
   * getJob() and published as a 'log' event. False once the lease is lost.
   */
  async log(lease: LeaseRef, line: string): Promise<boolean> {
    return this.parts.progress.log(lease, line);
  }

  // ---- events (event-hub.ts, watching.ts) ----------------------------------------

  /** Job transitions of this queue from every process, as they happen. Never errors; completes on close(). */
  events(): Observable<QueueEvent> {
    return this.parts.hub.events$;
  }

  /**
   * Resolves once this object's event subscription is active: every transition after it
   * reaches `events()` (BullMQ's `QueueEvents.waitUntilReady`). Subscribing opens it; called
   * first, this opens it and keeps it until close(). Tries until it is (rejects on close()).
   */
  async eventsReady(): Promise<void> {
    return this.parts.hub.open();
  }

  /** The states of one job, starting with its current one, until it completes, dies or vanishes. */
  watch(id: string): Observable<JobState | 'gone'> {
    return this.parts.watching.watch(id);
  }

  /** Resolves with the job's result once it completes (needs keepCompletedMs > 0). */
  async waitForResult(id: string, opts: { timeoutMs?: number } = {}): Promise<Result | undefined> {
    return this.parts.watching.waitForResult(id, opts);
  }

  // ---- this object's connections --------------------------------------------------

  /** Closes the connections relq opened; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.parts.ctx.isClosed) return;
    await this.parts.settings.shutdown(); // releases waiting adds (ClosedError) and exclusive roles
    this.parts.ctx.markClosed();
    this.parts.hub.close();
    this.parts.cancels.close();
    await this.parts.ctx.releaseConnections();
  }

  get isClosed(): boolean {
    return this.parts.ctx.isClosed;
  }
}
