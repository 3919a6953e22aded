import type { QueueKeys } from '../redis/keys.js';
import type { SchedulerInfo, SchedulerSpec, SchedulerTemplate, SchedulerTickResult } from '../schedulers/types.js';
import type { JobPolicy } from '../adds/types.js';
import type { LeaseRef } from '../leases/types.js';
import type { DeadLetter, JobInfo, JobState, QueueCounts, SweepResult } from '../management/read-types.js';
import type { CancelOptions, CancelResult, CleanOptions, CleanState, DeadLetterFilter, JobPage, RemoveOptions } from '../management/types.js';
import type { QueueStats } from '../settings/types.js';
import type { MetricsHistory, MetricsRange } from '../metrics-history/types.js';
import { readMetrics } from '../metrics-history/metrics-history.js';
import { DEFAULT_TOMBSTONE_MS, MAX_MANAGED } from '../defaults.js';
import type { WorkerInfo } from '../workers/types.js';
import { getWorkersScript } from '../workers/scripts.js';
import { assertGroupName, assertInt, assertOptions } from '../validate.js';
import { globalConcurrencySetting, groupOverridesSetting, type GroupOverride } from '../settings/concurrency.js';
import type { QueueParts } from './queue-parts.js';
import type { QueueState } from '../settings/queue-settings.js';

/**
 * What an operator does with a queue, from any process: read it (jobs, counts, dead letters),
 * sweep it, manage its jobs, run its schedulers, and change its shared settings and
 * lifecycle. The base of Queue (queue.ts), which adds producing, leasing, settling and
 * events; split in two only to keep each file to one kind of work.
 */
export class QueueAdmin<Data = unknown, Result = unknown> {
  readonly name: string;
  readonly prefix: string;
  /** @internal The queue's Redis keys (lib/core/redis/keys.ts), for the repository's own tools and tests. */
  readonly keys: QueueKeys;
  readonly defaults: Readonly<JobPolicy>;
  readonly maxPayloadBytes: number;
  /** @internal The parts the queue is made of (queue-parts.ts), for Queue's methods too. */
  protected readonly parts: QueueParts<Data, Result>;

  /** @internal Made by Queue's constructor. */
  protected constructor(parts: QueueParts<Data, Result>) {
    this.parts = parts;
    this.name = parts.ctx.name;
    this.prefix = parts.o.prefix;
    this.keys = parts.ctx.keys;
    this.defaults = parts.o.defaults;
    this.maxPayloadBytes = parts.o.maxPayloadBytes;
  }

  // ---- housekeeping and reading (inspector.ts) ----------------------------------

  /**
   * One bounded pass: expired leases back to pending (a failed attempt; dead past the
   * limit), due delayed jobs promoted, ended retention and idempotency windows cleared, a
   * lost wake-up token made up for. Safe to run from many processes at once.
   */
  async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    return this.parts.inspector.sweep(opts);
  }

  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    return this.parts.inspector.getJob(id);
  }

  async counts(): Promise<QueueCounts> {
    return this.parts.inspector.counts();
  }

  /**
   * Pending jobs of each of `priorities` (-1000 to 1000), keyed by priority, read at one
   * instant: BullMQ's getCountsPerPriority. Priority 0 counts the grouped jobs too (a group's
   * jobs have none); delayed, leased and finished jobs are not pending. O(log P) per priority.
   */
  getCountsPerPriority(priorities: readonly number[]): Promise<Record<number, number>> {
    return this.parts.inspector.countsPerPriority(priorities);
  }

  /**
   * The live workers of this queue, from any process: host, pid, appName, concurrency and
   * running jobs as of each one's last registration (its calls carry one every few seconds),
   * oldest first. A worker that closed is gone at once; one that died, after its
   * `workerTtlMs` (default 60 s). Entries past it are dropped here (docs/observability.md).
   */
  async getWorkers(): Promise<WorkerInfo[]> {
    return this.parts.ctx.run(getWorkersScript, { limit: MAX_MANAGED, queue: this.name });
  }

  /** Stops leasing on every worker of this queue; adds go on. */
  async pause(): Promise<void> {
    return this.parts.inspector.setPaused(true);
  }

  async resume(): Promise<void> {
    return this.parts.inspector.setPaused(false);
  }

  async isPaused(): Promise<boolean> {
    return (await this.counts()).paused;
  }

  /** Dead-lettered jobs, oldest first. */
  async listDead(opts: { offset?: number; limit?: number } = {}): Promise<Array<DeadLetter<Data>>> {
    return this.parts.inspector.listDead(opts);
  }

  /**
   * Moves dead letters back to pending with a fresh attempt budget: the given ids, or the
   * oldest `limit` that pass the filter (`name`, died at least `olderThanMs` ago). Returns
   * the ids moved. O(log D + limit) for D dead letters; with `name`, O(log D + examined).
   */
  retryDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.parts.inspector.deadOp('redrive', target);
  }

  /** Deletes dead letters for good: the given ids, or the oldest `limit` that pass the filter (as retryDead). */
  purgeDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.parts.inspector.deadOp('purge', target);
  }

  // ---- job management (management.ts) --------------------------------------------

  /**
   * One page of the jobs in `state`: positions `start` to `end` (inclusive, at most 10 000)
   * in `order`. 'asc' is lease order for pending jobs (priority, then FIFO; grouped jobs after
   * the ungrouped ones, group by group in name order), due time for delayed, lease deadline
   * for working, end of retention for completed, time of death for dead; 'desc' reverses it.
   * O(log N + M) for a page of M; pending: O(start + M) plus O(G log G) for G groups.
   */
  getJobs(state: JobState, page?: JobPage): Promise<Array<JobInfo<Data, Result>>>;
  /**
   * One page over several states (BullMQ's getJobs(types, start, end)): positions `start` to
   * `end` count through the states in the order given, each state's jobs in `order` as above
   * (`['pending', 'delayed']`: the pending jobs, then the delayed ones). Each state at most
   * once (ValidationError). A state past the page's end is not read.
   */
  getJobs(states: readonly JobState[], page?: JobPage): Promise<Array<JobInfo<Data, Result>>>;
  getJobs(states: JobState | readonly JobState[], page: JobPage = {}): Promise<Array<JobInfo<Data, Result>>> {
    return this.parts.management.getJobs(states, page);
  }

  /**
   * Removes a job in any state, from every index, with its result and its idempotency key
   * (the same jobId may be added again). A leased job is refused with JobLeasedError unless
   * `force`; forced, its lease ends, and its holder's ack, nack and touch answer false. A
   * bounded queue's waiting producers get the freed slot. A flow's parent goes with the
   * descendants it waits for; a parent that waited for the job fails (docs/flows.md). False
   * when there is no such job. O(1), or O(position) for a job in a pending list.
   */
  remove(id: string, opts: RemoveOptions = {}): Promise<boolean> {
    return this.parts.management.remove(id, opts);
  }

  /**
   * Cancels a job, in one atomic call. A job not leased (pending, delayed, a flow's parent
   * waiting for its children) is removed, as remove() does. A leased one's lease ends at once:
   * dead-lettered (`outcome: 'dead'`, the default) or failed as an attempt (`'retry'`: retried
   * after its backoff, dead when its attempts are spent), with a CancelledError. Its handler's
   * `job.signal` aborts with that CancelledError within moments (its Worker listens for
   * cancels), its slot is freed, and its late ack, nack or touch changes nothing. Returns what
   * became of it, or false when there is no such job or it already finished (nothing written).
   * Replay-safe: a call resent after a lost reply answers as the first did.
   */
  cancel(id: string, opts: CancelOptions = {}): Promise<CancelResult> {
    return this.parts.management.cancel(id, opts);
  }

  /**
   * Runs a completed or dead job again: back to pending with a fresh attempt budget, its data,
   * name, priority and group kept, its failure history too (getJob's `failuresBeforeRedrive`
   * tells the old failures from the new budget); a completed job's result goes. Returns the
   * state it left. Any other job, or none, is refused with JobNotRetryableError, nothing
   * written. O(log N).
   */
  retry(id: string): Promise<'completed' | 'dead'> {
    return this.parts.management.retry(id);
  }

  /** Makes a delayed job pending now. False when it is not delayed. O(log D). */
  promote(id: string): Promise<boolean> {
    return this.parts.management.promote(id);
  }

  /**
   * Gives a job a new priority (-1000 to 1000). A pending job moves behind the jobs that
   * already have it, or with `lifo` ahead of them (also when its priority is unchanged); a
   * delayed, leased or dead job keeps it for when it is pending again, at its tail. A job with
   * a group is refused (ValidationError). False when there is no such job, or it completed.
   * O(log P), or O(position) for a job in the FIFO pending list.
   */
  changePriority(id: string, priority: number, opts: { lifo?: boolean } = {}): Promise<boolean> {
    return this.parts.management.changePriority(id, priority, opts);
  }

  /**
   * A delayed job becomes due `delayMs` from now (Redis clock; 0: due at once) instead of when
   * it was. False, nothing written, when the job is not delayed (as BullMQ's changeDelay: a
   * pending job is not delayed by it). Publishes 'delayed'. O(log D).
   */
  changeDelay(id: string, delayMs: number): Promise<boolean> {
    return this.parts.management.changeDelay(id, delayMs);
  }

  /**
   * Replaces a job's data, checked as `add()` checks it (JSON, `maxPayloadBytes`); everything
   * else of the job stays. By id: any job no lease holds (pending, delayed, waiting for its
   * children, completed, dead); a leased one is refused with JobLeasedError, nothing written,
   * since its handler owns it: the handler calls `job.updateData(data)`, and a lease taken with
   * `lease()` is passed instead of the id. Through a lease, false once that lease no longer
   * holds the job. False when there is no such job. O(size of the job).
   */
  updateData(idOrLease: string | LeaseRef, data: Data): Promise<boolean> {
    return this.parts.management.updateData(idOrLease, data);
  }

  /**
   * Removes up to `limit` (default 1000) completed or dead jobs that finished at least
   * `olderThanMs` ago, oldest first; returns their ids. Completed jobs keep their idempotency
   * windows. O(log N + limit) (docs/bounded-fair-batch.md, "Job management").
   */
  clean(state: CleanState, opts: CleanOptions = {}): Promise<string[]> {
    return this.parts.management.clean(state, opts);
  }

  /**
   * Removes job `id`'s log lines (`job.log`), or all but its last `keep` (BullMQ's
   * clearLogs), in any state; returns how many were removed (0 for an unknown job). O(lines
   * removed).
   */
  clearLogs(id: string, opts: { keep?: number } = {}): Promise<number> {
    return this.parts.progress.clearLogs(id, opts);
  }

  /**
   * Removes every waiting job, pending (groups included), delayed and flow parents waiting
   * for their children, in one atomic call; leased, completed and dead jobs stay. A bounded
   * queue's waiting producers get the room. Returns the number removed. O(P + D + W).
   */
  drain(): Promise<number> {
    return this.parts.management.drain();
  }

  // ---- job schedulers (schedulers.ts, docs/schedulers.md) -------------------------

  /**
   * Creates or replaces the scheduler `id`: a job from `template` at every slot of `spec`
   * (a cron expression, or every `everyMs`), exactly one per slot however many processes
   * tick. Its next slot's job is queued at once, as a delayed job `repeat:<id>:<slot>`. The
   * same spec and template again change nothing (false); a different one replaces the queued
   * job and starts the count again (true). Upserts of one id at once all succeed; the last to
   * run wins. Everything is checked first (ValidationError).
   */
  upsertScheduler(id: string, spec: SchedulerSpec, template?: SchedulerTemplate<Data>): Promise<boolean> {
    return this.parts.schedulers.upsert(id, spec, template);
  }

  /** Every scheduler of the queue, by id, with its next slot (Redis time). O(S). */
  getSchedulers(): Promise<Array<SchedulerInfo<Data>>> {
    return this.parts.schedulers.list() as Promise<Array<SchedulerInfo<Data>>>;
  }

  /** Removes a scheduler and its queued next job (jobs of slots already due stay). False when there is none. */
  removeScheduler(id: string): Promise<boolean> {
    return this.parts.schedulers.remove(id);
  }

  /**
   * One scheduler tick: each scheduler whose next slot came due (Redis time) gets its
   * following slot's job, and, for slots missed meanwhile, what its `missed` policy says.
   * Safe from many processes at once. A SchedulerTicker (or the Nest sweeper) runs it.
   */
  runSchedulers(opts: { limit?: number } = {}): Promise<SchedulerTickResult> {
    return this.parts.schedulers.tick(opts);
  }

  // ---- the queue's shared settings and lifecycle (queue-settings.ts) --------------

  /**
   * Closes the queue itself (in Redis, for every process), not this object's connections
   * (that is close()): adds fail with QueueClosedError, producers blocked on a full queue are
   * released with it, consumers finish what is left and then stop. False if already closed.
   */
  closeQueue(): Promise<boolean> {
    return this.parts.settings.closeQueue();
  }

  /** Opens a closed queue again. False if it was open. */
  reopenQueue(): Promise<boolean> {
    return this.parts.settings.reopenQueue();
  }

  /** Whether the queue was closed with closeQueue() (a Redis read; see also `isClosed`). */
  async isQueueClosed(): Promise<boolean> {
    return (await this.parts.settings.state()).closed;
  }

  /** The queue's shared settings and state as stored in Redis. */
  queueState(): Promise<QueueState> {
    return this.parts.settings.state();
  }

  /**
   * Sets the queue-wide concurrency: at most `limit` jobs leased at once by all workers of all
   * processes (0 removes it). Takes effect at the next lease of every worker, nothing
   * restarted; leases held above a lowered limit run to their end (docs/concurrency.md).
   */
  async setGlobalConcurrency(limit: number): Promise<void> {
    await this.parts.settings.setShared({ gc: globalConcurrencySetting(limit, 'limit') });
  }

  /** The queue-wide concurrency (0: none). */
  async getGlobalConcurrency(): Promise<number> {
    return (await this.parts.settings.state()).globalConcurrency;
  }

  /**
   * Gives `group` limits of its own in place of the queue's `groupConcurrency` /
   * `groupLimiter`, or (null) removes them; read at the next lease, nothing restarted.
   */
  async setGroupOverride(group: string, override: GroupOverride | null): Promise<void> {
    assertGroupName(group, 'group');
    await this.parts.settings.setShared({ govr: groupOverridesSetting({ [group]: override }, 'override') });
  }

  /** The groups with limits of their own, by group. */
  async getGroupOverrides(): Promise<Record<string, GroupOverride>> {
    return (await this.parts.settings.state()).groupOverrides;
  }

  /** Produced and consumed messages and bytes, and whether the queue counts them (`stats`). */
  stats(): Promise<QueueStats> {
    return this.parts.settings.stats();
  }

  /**
   * The queue's metrics history (the `metrics` option), from Redis, whichever process wrote
   * it: per minute of `from`..`to` (epoch ms, Redis time; default the last hour, at most 10 081
   * minutes), the attempts completed, failed (retried) and dead, and the p50 / p95 / p99 of
   * their run times (lease start to settle). One read-only call, O(minutes).
   */
  getMetrics(range: MetricsRange = {}): Promise<MetricsHistory> {
    return readMetrics(this.parts.ctx, range);
  }

  /**
   * Removes every key of the queue. Blocked producers, consumers and role waiters fail with
   * QueueDeletedError; a short-lived tombstone (`tombstoneMs`, default 10 s) tells late
   * arrivals the same. The queue leaves the list of listQueues(). Returns the number of keys removed.
   */
  async deleteQueue(opts: { tombstoneMs?: number } = {}): Promise<number> {
    assertOptions('deleteQueue options', opts, ['tombstoneMs']);
    const ttl = opts.tombstoneMs ?? DEFAULT_TOMBSTONE_MS;
    assertInt('tombstoneMs', ttl, { min: 1, max: 2 ** 31 });
    const removed = await this.parts.settings.deleteQueue(ttl);
    await this.parts.ctx.unregister(); // the registry has a slot of its own: a second call (lib/core/registry/registry.ts)
    return removed;
  }

  /** This process's identity in exclusive roles and waiter registrations. */
  get identity(): { host: string; pid: number; instance: string } {
    return { ...this.parts.settings.identity };
  }
}
