import type { Observable } from 'rxjs';
import type { RedisClient } from '../redis/connection.js';
import type { QueueKeys } from '../redis/keys.js';
import type {
  AddResult,
  BulkJob,
  CleanOptions,
  CleanState,
  DeadLetter,
  DeadLetterFilter,
  JobInfo,
  JobOptions,
  JobPage,
  JobPolicy,
  JobProgress,
  JobState,
  Lease,
  LeaseOptions,
  LeaseRef,
  QueueCounts,
  QueueEvent,
  QueueOptions,
  QueueStats,
  RemoveOptions,
  SweepResult,
} from '../types.js';
import { assertInt, assertOptions } from '../validate.js';
import { EventHub } from './event-hub.js';
import type { AddFlowOptions, FlowJob, FlowResult } from '../flow-types.js';
import { Flows } from './flows.js';
import { Inspector } from './inspector.js';
import { registerInternals } from './internals.js';
import { Leasing } from './leasing.js';
import { Management } from './management.js';
import { resolveQueueOptions } from './options.js';
import { Producer } from './producer.js';
import { ProgressWriter } from './progress.js';
import { QueueContext } from './queue-context.js';
import { QueueProbe } from './queue-probe.js';
import { DEFAULT_TOMBSTONE_MS, QueueSettings, type QueueState } from './queue-settings.js';
import { Settling } from './settling.js';
import { Schedulers } from './schedulers.js';
import type { SchedulerInfo, SchedulerSpec, SchedulerTemplate, SchedulerTickResult } from '../scheduler-types.js';
import { Watching } from './watching.js';

/**
 * A named work queue on Redis: the producer and lease-level consumer API. Every
 * state change is one Lua script; leases are fenced by tokens; time is Redis's.
 * This class is the public face; each part of the work lives in its own file of this folder.
 */
export class Queue<Data = unknown, Result = unknown> {
  readonly name: string;
  readonly prefix: string;
  readonly keys: QueueKeys;
  readonly defaults: Readonly<JobPolicy>;
  readonly maxPayloadBytes: number;
  readonly #ctx: QueueContext;
  /** Bounded / fair / lifecycle / exclusive / stats (lib/core/queue/queue-settings.ts). */
  readonly #settings: QueueSettings;
  readonly #hub: EventHub;
  readonly #producer: Producer<Data>;
  readonly #leasing: Leasing<Data>;
  readonly #settling: Settling<Result>;
  readonly #inspector: Inspector<Data, Result>;
  readonly #management: Management<Data, Result>;
  readonly #watching: Watching<Data, Result>;
  readonly #progress: ProgressWriter;
  readonly #flows: Flows;
  readonly #schedulers: Schedulers;

  constructor(name: string, options: QueueOptions = {}) {
    const o = resolveQueueOptions(name, options); // everything checked before anything connects
    const ctx = new QueueContext(name, o, options.connection);
    this.#ctx = ctx;
    this.name = name;
    this.prefix = o.prefix;
    this.keys = ctx.keys;
    this.defaults = o.defaults;
    this.maxPayloadBytes = o.maxPayloadBytes;
    this.#settings = new QueueSettings(ctx, o.settings);
    this.#hub = new EventHub(
      ctx.handle,
      ctx.keys.byName.events,
      ctx.keys.byName.listeners,
      name,
      (err) => ctx.wrapError(err, 'events'),
      (message) => ctx.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message }),
    );
    const probe = new QueueProbe(ctx.handle.client, ctx.keys.byName.listeners, ctx.keys.byName.meta, () => this.#hub.listening);
    this.#producer = new Producer(ctx, this.#settings, probe);
    this.#leasing = new Leasing(ctx, this.#settings);
    this.#settling = new Settling(ctx);
    this.#inspector = new Inspector(ctx);
    this.#management = new Management(ctx, this.#inspector);
    this.#watching = new Watching(name, this.#hub, (id) => this.#inspector.getJob(id));
    this.#progress = new ProgressWriter(ctx);
    this.#flows = new Flows(ctx, this.#settings);
    const flows = this.#flows;
    this.#schedulers = new Schedulers(ctx);
    const progress = this.#progress;
    const leasing = this.#leasing;
    const settling = this.#settling;
    registerInternals(this, {
      name,
      maxPayloadBytes: o.maxPayloadBytes,
      get isClosed() {
        return ctx.isClosed;
      },
      leaseStep: (items, count, leaseMs, woken, reqId) => leasing.leaseStep(items, count, leaseMs, woken, reqId),
      settle: (items, reqId) => settling.settle(items, reqId),
      touchMany: (leases, extendMs) => settling.touchMany(leases, extendMs),
      waitForWork: (blocker, ms) => leasing.waitForWork(blocker, ms),
      workWaiting: () => leasing.workWaiting(),
      updateProgress: (lease, value) => progress.updateProgress(lease, value),
      log: (lease, line) => progress.log(lease, line),
      childrenResults: (id) => flows.childrenResults(id),
      openBlocker: () => ctx.openBlocker(),
      closeBlocker: (b) => ctx.closeBlocker(b),
    });
  }

  /** The shared command connection (for health checks and tests). */
  get client(): RedisClient {
    return this.#ctx.handle.client;
  }

  // ---- producing (producer.ts; bounded queues: backpressure.ts) -----------------

  /** Adds one job. With a `jobId` that exists, nothing is written and `created` is false. */
  async add(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.#producer.add(data, opts, 'wait');
  }

  /** Adds many jobs in one round trip and one atomic script. */
  addBulk(jobs: ReadonlyArray<BulkJob<Data>>, opts: { waitMs?: number } = {}): Promise<AddResult[]> {
    return this.#producer.addBulk(jobs, opts, 'wait');
  }

  /** Adds one job now or fails with QueueFullError when the (bounded) queue is full. Never waits. */
  async tryAdd(data: Data, opts?: JobOptions): Promise<AddResult> {
    return this.#producer.add(data, opts, 'try');
  }

  /** addBulk that fails at once with QueueFullError when the jobs do not all fit now. */
  tryAddBulk(jobs: ReadonlyArray<BulkJob<Data>>): Promise<AddResult[]> {
    return this.#producer.addBulk(jobs, {}, 'try');
  }

  // ---- flows of parent and child jobs (flows.ts, docs/flows.md) -------------------

  /**
   * Adds a flow: a job and its children (each may have children of its own), all in this
   * queue, in one atomic script: every job or none (a bad job anywhere is refused before
   * anything is written). A parent waits in the state 'waiting-children' until each child
   * completed, then becomes pending and reads their results (`job.childrenResults()`). A
   * child that dies fails its parent, or is ignored (`onFailure` / `onChildFailure`).
   * Throws CrossQueueFlowError for a job naming another queue, FlowJobExistsError when a
   * child's jobId exists; a root jobId that exists makes the whole flow a duplicate
   * (`created: false`, nothing written).
   */
  addFlow(flow: FlowJob<Data>, opts: AddFlowOptions = {}): Promise<FlowResult> {
    return this.#flows.addFlow(flow, opts);
  }

  /** The results of a parent's completed children: child id → result (`null` for none). */
  childrenResults(id: string): Promise<Record<string, unknown>> {
    return this.#flows.childrenResults(id);
  }

  // ---- leasing (leasing.ts) and settling (settling.ts) ---------------------------

  /**
   * Leases up to `count` jobs. With nothing pending it waits up to `blockMs` on a
   * wake-up list (no polling) and returns as soon as a job arrives or comes due.
   */
  async lease(opts: LeaseOptions = {}): Promise<Array<Lease<Data>>> {
    return this.#leasing.lease(opts);
  }

  /** Completes the job. True exactly once per job; false for a stale or repeated lease. */
  async ack(lease: LeaseRef, result?: Result): Promise<boolean> {
    return this.#settling.ack(lease, result);
  }

  /** Acks many leases in one round trip; returns which succeeded, in order. */
  async ackBatch(leases: ReadonlyArray<LeaseRef | { lease: LeaseRef; result?: Result }>): Promise<boolean[]> {
    return this.#settling.ackBatch(leases);
  }

  /** A failed attempt: retried after `delayMs` (default: the job's backoff) or dead-lettered. */
  async nack(lease: LeaseRef, opts: { error?: unknown; delayMs?: number } = {}): Promise<boolean> {
    return this.#settling.nack(lease, opts);
  }

  /** Puts the job back without counting a failure. */
  async requeue(lease: LeaseRef, opts: { delayMs?: number; reason?: string } = {}): Promise<boolean> {
    return this.#settling.requeue(lease, opts);
  }

  /**
   * The job met an upstream rate limit: back at the head of the queue without a failed
   * attempt, and its group (a grouped job) or its queue (`scope: 'queue'`, or an ungrouped
   * job) leases nothing for `delayMs` (docs/rate-limits.md). False for a stale lease.
   */
  async rateLimit(lease: LeaseRef, delayMs: number, opts: { scope?: 'auto' | 'queue' } = {}): Promise<boolean> {
    return this.#settling.rateLimit(lease, delayMs, opts);
  }

  /** Dead-letters the job now, with no further attempts. */
  async reject(lease: LeaseRef, reason: unknown = 'rejected'): Promise<boolean> {
    return this.#settling.reject(lease, reason);
  }

  /** Extends the lease by `extendMs` from now (default: its own lease length). False once lost. */
  async touch(lease: LeaseRef, extendMs?: number): Promise<boolean> {
    return (await this.#settling.touchMany([lease], extendMs))[0]!;
  }

  // ---- progress and logs of a leased job (progress.ts) ---------------------------

  /**
   * Stores the leased job's progress (a number or a JSON object or array), shown by getJob()
   * and published as a 'progress' event. False once the lease is lost: a stale lease writes
   * nothing.
   */
  async updateProgress(lease: LeaseRef, progress: JobProgress): Promise<boolean> {
    return this.#progress.updateProgress(lease, progress);
  }

  /**
   * Appends a line to the leased job's log (the last `maxLogLines` are kept), shown by
   * getJob() and published as a 'log' event. False once the lease is lost.
   */
  async log(lease: LeaseRef, line: string): Promise<boolean> {
    return this.#progress.log(lease, line);
  }

  // ---- housekeeping and reading (inspector.ts) ----------------------------------

  /**
   * One bounded pass: expired leases back to pending (a failed attempt; dead past the
   * limit), due delayed jobs promoted, ended retention and idempotency windows cleared.
   * Safe to run from many processes at once.
   */
  async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    return this.#inspector.sweep(opts);
  }

  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    return this.#inspector.getJob(id);
  }

  async counts(): Promise<QueueCounts> {
    return this.#inspector.counts();
  }

  /** Stops leasing on every worker of this queue; adds go on. */
  async pause(): Promise<void> {
    return this.#inspector.setPaused(true);
  }

  async resume(): Promise<void> {
    return this.#inspector.setPaused(false);
  }

  async isPaused(): Promise<boolean> {
    return (await this.counts()).paused;
  }

  /** Dead-lettered jobs, oldest first. */
  async listDead(opts: { offset?: number; limit?: number } = {}): Promise<Array<DeadLetter<Data>>> {
    return this.#inspector.listDead(opts);
  }

  /**
   * Moves dead letters back to pending with a fresh attempt budget: the given ids, or the
   * oldest `limit` that pass the filter (`name`, died at least `olderThanMs` ago). Returns
   * the ids moved. O(log D + limit) for D dead letters; with `name`, O(log D + examined).
   */
  retryDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.#inspector.deadOp('redrive', target);
  }

  /** Deletes dead letters for good: the given ids, or the oldest `limit` that pass the filter (as retryDead). */
  purgeDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.#inspector.deadOp('purge', target);
  }

  // ---- job management (management.ts) --------------------------------------------

  /**
   * One page of the jobs in `state`: positions `start` to `end` (inclusive, at most 10 000)
   * in `order`. 'asc' is lease order for pending jobs (priority, then FIFO; grouped jobs after
   * the ungrouped ones, group by group in name order), due time for delayed, lease deadline
   * for working, end of retention for completed, time of death for dead; 'desc' reverses it.
   * O(log N + M) for a page of M; pending: O(start + M) plus O(G log G) for G groups.
   */
  getJobs(state: JobState, page: JobPage = {}): Promise<Array<JobInfo<Data, Result>>> {
    return this.#management.getJobs(state, page);
  }

  /**
   * Removes a job in any state, from every index, with its result and its idempotency key
   * (the same jobId may be added again). A leased job is refused with JobLeasedError unless
   * `force`; forced, its lease ends, and its holder's ack, nack and touch answer false. A
   * bounded queue's waiting producers get the freed slot. False when there is no such job.
   * O(1), or O(position) for a job in a pending list.
   */
  remove(id: string, opts: RemoveOptions = {}): Promise<boolean> {
    return this.#management.remove(id, opts);
  }

  /** Makes a delayed job pending now. False when it is not delayed. O(log D). */
  promote(id: string): Promise<boolean> {
    return this.#management.promote(id);
  }

  /**
   * Gives a job a new priority (-1000 to 1000). A pending job moves behind the jobs that
   * already have it; a delayed, leased or dead job keeps it for when it is pending again. A
   * job with a group is refused (ValidationError). False when there is no such job, or it
   * completed. O(log P), or O(position) for a job in the FIFO pending list.
   */
  changePriority(id: string, priority: number): Promise<boolean> {
    return this.#management.changePriority(id, priority);
  }

  /**
   * Removes up to `limit` (default 1000) completed or dead jobs that finished at least
   * `olderThanMs` ago, oldest first; returns their ids. Completed jobs keep their idempotency
   * windows. O(log N + limit) (docs/bounded-fair-batch.md, "Job management").
   */
  clean(state: CleanState, opts: CleanOptions = {}): Promise<string[]> {
    return this.#management.clean(state, opts);
  }

  /**
   * Removes every waiting job, pending (groups included) and delayed, in one atomic call;
   * leased, completed and dead jobs stay. A bounded queue's waiting producers get the room.
   * Returns the number removed. O(P + D).
   */
  drain(): Promise<number> {
    return this.#management.drain();
  }

  // ---- job schedulers (schedulers.ts, docs/schedulers.md) -------------------------

  /**
   * Creates or replaces the scheduler `id`: a job from `template` at every slot of `spec`
   * (a cron expression, or every `everyMs`), exactly one per slot however many processes
   * tick. Its next slot's job is queued at once, as a delayed job `repeat:<id>:<slot>`. The
   * same spec and template again change nothing (false); a different one replaces the queued
   * job and starts the count again (true). Everything is checked first (ValidationError).
   */
  upsertScheduler(id: string, spec: SchedulerSpec, template?: SchedulerTemplate<Data>): Promise<boolean> {
    return this.#schedulers.upsert(id, spec, template);
  }

  /** Every scheduler of the queue, by id, with its next slot (Redis time). O(S). */
  getSchedulers(): Promise<Array<SchedulerInfo<Data>>> {
    return this.#schedulers.list() as Promise<Array<SchedulerInfo<Data>>>;
  }

  /** Removes a scheduler and its queued next job (jobs of slots already due stay). False when there is none. */
  removeScheduler(id: string): Promise<boolean> {
    return this.#schedulers.remove(id);
  }

  /**
   * One scheduler tick: each scheduler whose next slot came due (Redis time) gets its
   * following slot's job, and, for slots missed meanwhile, what its `missed` policy says.
   * Safe from many processes at once. A SchedulerTicker (or the Nest sweeper) runs it.
   */
  runSchedulers(opts: { limit?: number } = {}): Promise<SchedulerTickResult> {
    return this.#schedulers.tick(opts);
  }

  // ---- events (event-hub.ts, watching.ts) ----------------------------------------

  /** Job transitions of this queue from every process, as they happen. Never errors; completes on close(). */
  events(): Observable<QueueEvent> {
    return this.#hub.events$;
  }

  /** The states of one job, starting with its current one, until it completes, dies or vanishes. */
  watch(id: string): Observable<JobState | 'gone'> {
    return this.#watching.watch(id);
  }

  /** Resolves with the job's result once it completes (needs keepCompletedMs > 0). */
  async waitForResult(id: string, opts: { timeoutMs?: number } = {}): Promise<Result | undefined> {
    return this.#watching.waitForResult(id, opts);
  }

  // ---- the queue's shared settings and lifecycle (queue-settings.ts) --------------

  /**
   * Closes the queue itself (in Redis, for every process), not this object's connections
   * (that is close()): adds fail with QueueClosedError, producers blocked on a full queue are
   * released with it, consumers finish what is left and then stop. False if already closed.
   */
  closeQueue(): Promise<boolean> {
    return this.#settings.closeQueue();
  }

  /** Opens a closed queue again. False if it was open. */
  reopenQueue(): Promise<boolean> {
    return this.#settings.reopenQueue();
  }

  /** Whether the queue was closed with closeQueue() (a Redis read; see also `isClosed`). */
  async isQueueClosed(): Promise<boolean> {
    return (await this.#settings.state()).closed;
  }

  /** The queue's shared settings and state as stored in Redis. */
  queueState(): Promise<QueueState> {
    return this.#settings.state();
  }

  /** Produced and consumed messages and bytes, and whether the queue counts them (`stats`). */
  stats(): Promise<QueueStats> {
    return this.#settings.stats();
  }

  /**
   * Removes every key of the queue. Blocked producers, consumers and role waiters fail with
   * QueueDeletedError; a short-lived tombstone (`tombstoneMs`, default 10 s) tells late
   * arrivals the same. Returns the number of keys removed.
   */
  async deleteQueue(opts: { tombstoneMs?: number } = {}): Promise<number> {
    assertOptions('deleteQueue options', opts, ['tombstoneMs']);
    const ttl = opts.tombstoneMs ?? DEFAULT_TOMBSTONE_MS;
    assertInt('tombstoneMs', ttl, { min: 1, max: 2 ** 31 });
    return this.#settings.deleteQueue(ttl);
  }

  /** This process's identity in exclusive roles and waiter registrations. */
  get identity(): { host: string; pid: number; instance: string } {
    return { ...this.#settings.identity };
  }

  // ---- this object's connections --------------------------------------------------

  /** Closes the connections relq opened; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.#ctx.isClosed) return;
    await this.#settings.shutdown(); // releases waiting adds (ClosedError) and exclusive roles
    this.#ctx.markClosed();
    this.#hub.close();
    await this.#ctx.releaseConnections();
  }

  get isClosed(): boolean {
    return this.#ctx.isClosed;
  }
}
