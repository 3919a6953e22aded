import { LeaseLostError, RateLimitError, UnrecoverableError, type CancelledError } from '../errors.js';
import type { ProcessScope } from '../instrumentation/index.js';
import type { JobPolicy } from '../adds/types.js';
import type { JobParent, Lease, LeasedJob } from '../leases/types.js';
import type { JobProgress } from '../management/read-types.js';
import type { AddFlowOptions, FlowJob, FlowResult } from '../flows/types.js';

/** Where a handler moved its job as it ended its lease itself. */
export type MovedTo = 'delayed' | 'waiting-children';

/** The job as a handler sees it; plain `Job` for a handler that does not read its data. */
export interface Job<Data = unknown> extends LeasedJob<Data> {
  /**
   * Aborts when the lease is lost (a LeaseLostError), the job is cancelled (`queue.cancel(id)`: a
   * CancelledError), the attempt runs past its timeoutMs (a TimeoutError), or the worker gives
   * the job back at shutdown.
   */
  readonly signal: AbortSignal;
  /** Current lease deadline (Redis clock, epoch ms). */
  readonly deadline: number;
  /** Extends the lease now; false once it is lost. The worker also heartbeats by itself. */
  touch(extendMs?: number): Promise<boolean>;
  /** Dead-letters the job at once (no further attempts). */
  reject(reason?: string): never;
  /**
   * Met an upstream rate limit: throws a RateLimitError, so the job goes back to the head of
   * the queue without a failed attempt and its group (or its queue) leases nothing for
   * `delayMs`. `scope: 'queue'` holds back the whole queue for a grouped job too.
   */
  rateLimit(delayMs: number, opts?: { scope?: 'auto' | 'queue' }): never;
  /**
   * Stores the job's progress (a number or a JSON object or array): shown by getJob(),
   * published as a 'progress' event. False once the lease is lost (nothing written).
   */
  updateProgress(progress: JobProgress): Promise<boolean>;
  /** Appends a line to the job's log (the last `maxLogLines` kept). False once the lease is lost. */
  log(line: string): Promise<boolean>;
  /**
   * Replaces the job's stored data (checked as `add()` checks it), and `job.data` with it: a
   * retry, or the next step of a step job, starts from it. False once the lease is lost
   * (nothing written).
   */
  updateData(data: Data): Promise<boolean>;
  /**
   * A step job (docs/handlers.md): ends this attempt's lease and delays the job until `runAt`
   * (epoch ms or a Date, Redis clock; a past time is due at once), without a failed attempt
   * and with its data as stored (`updateData` first). Once it answers true the attempt is
   * over: whatever the handler then returns or throws is dropped (no ack), and its slot is
   * free when it does. False, nothing changed, once the lease is lost.
   */
  moveToDelayed(runAt: number | Date): Promise<boolean>;
  /** moveToDelayed() `delayMs` from now, on Redis's clock. */
  snooze(delayMs: number): Promise<boolean>;
  /**
   * A flow's parent (docs/flows.md): the results of its completed children, child id →
   * result (`null` when a child returned none). `{}` for a job without children.
   */
  childrenResults<R = unknown>(): Promise<Record<string, R>>;
  /**
   * Fans out (docs/flows.md): adds children of this job, each with its own children if any,
   * in this queue or others (`queue`, as in addFlow), all or nothing, through the lease. Then
   * `waitForChildren()`. A child whose jobId exists is not added again (`created: false`), so a
   * handler that runs again after a crash, having saved its step (`updateData`), adds nothing
   * twice. Throws LeaseLostError, nothing written, once the lease is lost.
   */
  addChildren<ChildData = unknown>(children: ReadonlyArray<FlowJob<ChildData>>, opts?: AddFlowOptions): Promise<FlowResult[]>;
  /**
   * Ends this attempt's lease until the children it added are done: the job waits in
   * 'waiting-children', then runs again (a new lease, the same attempt count) and reads their
   * results with `childrenResults()`; with none unfinished it is pending again at once. A
   * child that died meanwhile acts by its `onFailure` (the job may die here). Once it answers
   * true the attempt is over, as after moveToDelayed(). False once the lease is lost.
   */
  waitForChildren(): Promise<boolean>;
}

/** What a JobView calls for its lease: the worker's touch and delay, the queue's progress, log and data. */
export interface JobCalls<Data> {
  touch(held: HeldLease<Data>, extendMs?: number): Promise<boolean>;
  updateProgress(lease: Lease<Data>, progress: JobProgress): Promise<boolean>;
  log(lease: Lease<Data>, line: string): Promise<boolean>;
  updateData(lease: Lease<Data>, data: Data): Promise<boolean>;
  delay(held: HeldLease<Data>, when: { runAt: number | Date } | { delayMs: number }): Promise<boolean>;
  waitForChildren(held: HeldLease<Data>): Promise<boolean>;
  addChildren(held: HeldLease<Data>, children: ReadonlyArray<FlowJob<unknown>>, opts: AddFlowOptions): Promise<FlowResult[]>;
  childrenResults(id: string): Promise<Record<string, unknown>>;
}

/** A lease a worker holds, with what it needs to heartbeat and abort it. */
export class HeldLease<Data> {
  /** Created on first use of `signal`: most handlers never read it. */
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  renewedAt = Date.now();
  /** The attempt ended: its handler's outcome, its timeout, or the loss of its lease (Worker). */
  finished = false;
  lost = false;
  /**
   * Its handler ended the lease itself (job.moveToDelayed, snooze, waitForChildren; set while
   * that call is in flight), so the attempt's outcome is dropped.
   */
  moved: MovedTo | false = false;
  /** cancel() ended the lease: reported as 'cancelled', not 'lost', also when its outcome was on the way. */
  cancelled: CancelledError | undefined;
  /** Set when the attempt ran past the job's timeoutMs: it fails with this error. */
  timedOut: Error | undefined;
  /** Stops the attempt's timeout clock (lib/core/worker/attempt-timeout.ts; Worker). */
  stopTimer: (() => void) | undefined;
  /** What registered instruments see of the attempt, when any is registered (Worker). */
  observed: ProcessScope | undefined;

  constructor(readonly lease: Lease<Data>) {}

  get leaseLen(): number {
    return this.lease.leaseMs;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }

  /** Still this worker's to touch and settle: not lost, given back or moved by its handler. */
  get live(): boolean {
    return !this.lost && !this.moved;
  }

  /** The lease is gone (`reason`: lost, or cancelled): its outcome is not settled. False when already lost. */
  markLost(reason: Error = new LeaseLostError(this.lease.job.id)): boolean {
    if (this.lost) return false;
    this.lost = true;
    this.abort(reason);
    return true;
  }

  /** Given back at shutdown: its late outcome is not settled. */
  giveBack(): void {
    this.lost = true;
    this.abort(new LeaseLostError(this.lease.job.id, 'worker is shutting down; the job was given back to the queue'));
  }
}

/** Job fields as own properties; signal, deadline and the calls on the prototype. */
export class JobView<Data> implements Job<Data> {
  readonly id: string;
  readonly name: string;
  /** Readonly to the handler (Job); updateData() replaces it. */
  data: Data;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly requeues: number;
  readonly createdAt: number;
  readonly leasedAt: number;
  readonly lastError?: string;
  readonly policy: Readonly<JobPolicy>;
  readonly group?: string;
  readonly parent?: JobParent;

  constructor(
    private readonly held: HeldLease<Data>,
    private readonly calls: JobCalls<Data>,
  ) {
    const j: LeasedJob<Data> = held.lease.job;
    this.id = j.id;
    this.name = j.name;
    this.data = j.data;
    this.attempt = j.attempt;
    this.maxAttempts = j.maxAttempts;
    this.priority = j.priority;
    this.requeues = j.requeues;
    this.createdAt = j.createdAt;
    this.leasedAt = j.leasedAt;
    if (j.lastError !== undefined) this.lastError = j.lastError;
    this.policy = j.policy;
    if (j.group !== undefined) this.group = j.group;
    if (j.parent !== undefined) this.parent = j.parent;
  }

  get signal(): AbortSignal {
    return this.held.signal;
  }

  get deadline(): number {
    return this.held.lease.deadline;
  }

  touch(extendMs?: number): Promise<boolean> {
    return this.calls.touch(this.held, extendMs);
  }

  updateProgress(progress: JobProgress): Promise<boolean> {
    return this.calls.updateProgress(this.held.lease, progress);
  }

  log(line: string): Promise<boolean> {
    return this.calls.log(this.held.lease, line);
  }

  async updateData(data: Data): Promise<boolean> {
    const written = await this.calls.updateData(this.held.lease, data);
    if (written) {
      this.data = data;
      (this.held.lease.job as { data: Data }).data = data; // the job the worker's events report
    }
    return written;
  }

  moveToDelayed(runAt: number | Date): Promise<boolean> {
    return this.calls.delay(this.held, { runAt });
  }

  snooze(delayMs: number): Promise<boolean> {
    return this.calls.delay(this.held, { delayMs });
  }

  childrenResults<R = unknown>(): Promise<Record<string, R>> {
    return this.calls.childrenResults(this.id) as Promise<Record<string, R>>;
  }

  addChildren<ChildData = unknown>(children: ReadonlyArray<FlowJob<ChildData>>, opts: AddFlowOptions = {}): Promise<FlowResult[]> {
    return this.calls.addChildren(this.held, children, opts);
  }

  waitForChildren(): Promise<boolean> {
    return this.calls.waitForChildren(this.held);
  }

  reject(reason = 'rejected'): never {
    throw new UnrecoverableError(reason);
  }

  rateLimit(delayMs: number, opts: { scope?: 'auto' | 'queue' } = {}): never {
    throw new RateLimitError(delayMs, opts);
  }
}
