import { defer, merge, mergeMap, switchMap, type Observable } from 'rxjs';
import type { QueueEvent } from '../events/types.js';
import type { DeadLetter, JobInfo, JobState, QueueCounts, SweepResult } from '../management/read-types.js';
import type { CancelOptions, CancelResult, CleanOptions, CleanState, DeadLetterFilter, JobPage, RemoveOptions } from '../management/types.js';
import { checkDeadFilter, checkJobStates, checkPriorities, resolveClean, resolvePage } from '../management/options.js';
import type { MetricsHistory, MetricsRange } from '../metrics-history/types.js';
import type { Queue } from '../queue/queue.js';
import type { SchedulerInfo, SchedulerSpec, SchedulerTemplate, SchedulerTickResult } from '../schedulers/types.js';
import type { GroupOverride } from '../settings/concurrency.js';
import type { QueueStats } from '../settings/types.js';
import type { QueueState } from '../settings/queue-settings.js';
import { assertGroupName, assertJobId, assertOptions } from '../validate.js';
import type { WorkerInfo } from '../workers/types.js';
import { partitionOfGeneratedId } from './layout.js';
import type { MapCheck } from './map-check.js';
import type { PartitionSet } from './partition-set.js';
import { metricsOf } from '../metrics-history/metrics-history.js';
import { countOf, mergeCounts, mergeStates, mergeStats, mergeSweeps, mergeTicks, mergeWorkers, pageAcross } from './merge.js';
import { checkGlobalConcurrency, shareOf } from './shares.js';

/**
 * @internal The parts PartitionedQueue's constructor makes, for the queue-wide operations.
 */
export interface PartitionedParts<Data, Result> {
  readonly name: string;
  /** The partitions as the queue's map says, growing with a resize. */
  readonly set: PartitionSet<Data, Result>;
  /** The object's look at the queue's map (map-check.ts). */
  readonly checkMap: MapCheck;
}

/**
 * What an operator does with a partitioned queue, as with a queue (QueueAdmin): each operation
 * is queue-wide. One on a job goes to the partition that holds it; one on the queue runs on
 * every partition and adds their answers up; a page of jobs counts through the partitions in
 * turn (docs/scale-out.md, "Queue-wide operations"). The base of PartitionedQueue, which adds
 * producing and the workers' side.
 */
export class PartitionedAdmin<Data = unknown, Result = unknown> {
  readonly name: string;
  /** @internal */
  protected readonly p: PartitionedParts<Data, Result>;

  /** @internal Made by PartitionedQueue's constructor. */
  protected constructor(p: PartitionedParts<Data, Result>) {
    this.p = p;
    this.name = p.name;
  }

  /** The number of partitions, as the queue's map last read says (a resize adds to it). */
  get partitions(): number {
    return this.p.set.n;
  }

  // ---- reading ----------------------------------------------------------------------

  /**
   * The job, from the partition its id names: a generated id starts with its partition; a
   * jobId a caller chose is looked for in the partition it routes to, then (a job routed by its
   * group or partitionKey) in the others.
   */
  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    assertJobId(id, 'id');
    const at = await this.#holder(id);
    return at === undefined ? null : this.p.set.queues[at]!.getJob(id);
  }

  /** The queue's counts: every partition read at once and added up (`paused` when every partition is). */
  async counts(): Promise<QueueCounts> {
    return mergeCounts(await this.countsByPartition());
  }

  /** Each partition's counts, by partition number. */
  async countsByPartition(): Promise<QueueCounts[]> {
    await this.p.checkMap.fresh();
    return Promise.all(this.p.set.queues.map((q) => q.counts()));
  }

  /** Pending jobs of each priority, every partition's added up (Queue.getCountsPerPriority). */
  async getCountsPerPriority(priorities: readonly number[]): Promise<Record<number, number>> {
    checkPriorities(priorities);
    const parts = await this.#all((q) => q.getCountsPerPriority(priorities));
    const total: Record<number, number> = {};
    for (const pr of priorities) total[pr] = parts.reduce((n, c) => n + (c[pr] ?? 0), 0);
    return total;
  }

  /**
   * One page of jobs in `states` (Queue.getJobs). Positions count through the states in the
   * order given and, inside each state, through the partitions in turn (partition 0 first;
   * 'desc' reverses both the partitions and each partition's order). Priorities and times
   * order jobs inside a partition, not across them.
   */
  async getJobs(states: JobState | readonly JobState[], page: JobPage = {}): Promise<Array<JobInfo<Data, Result>>> {
    const list = typeof states === 'string' ? checkJobStates([states]) : checkJobStates(states);
    const { start, end, order } = resolvePage(page);
    const counts = await this.countsByPartition();
    const slices: Array<{ state: JobState; part: number; size: number }> = [];
    for (const state of list) {
      const parts = counts.map((_, i) => i);
      if (order === 'desc') parts.reverse();
      for (const part of parts) slices.push({ state, part, size: countOf(counts[part]!, state) });
    }
    const pages = await Promise.all(
      pageAcross(slices.map((s) => s.size), start, end).map(({ slice, from, to }) =>
        this.p.set.queues[slices[slice]!.part]!.getJobs(slices[slice]!.state, { start: from, end: to, order }),
      ),
    );
    return pages.flat();
  }

  /** Dead letters: every partition's, oldest first inside a partition, partition 0 first. */
  async listDead(opts: { offset?: number; limit?: number } = {}): Promise<Array<DeadLetter<Data>>> {
    assertOptions('listDead options', opts, ['offset', 'limit']);
    const start = opts.offset ?? 0;
    const { end } = resolvePage({ start, end: start + (opts.limit ?? 100) - 1 });
    const counts = await this.countsByPartition();
    const pages = await Promise.all(
      pageAcross(counts.map((c) => c.dead), start, end).map(({ slice, from, to }) => this.p.set.queues[slice]!.listDead({ offset: from, limit: to - from + 1 })),
    );
    return pages.flat();
  }

  /** The live workers of the queue: each worker once, as of its latest registration in any partition. */
  async getWorkers(): Promise<WorkerInfo[]> {
    return mergeWorkers(await this.#all((q) => q.getWorkers()));
  }

  /** Produced and consumed figures of every partition added up; `enabled` when every partition counts. */
  async stats(): Promise<QueueStats> {
    return mergeStats(await this.#all((q) => q.stats()));
  }

  /**
   * The metrics history (the `metrics` option) of every partition, merged minute by minute:
   * counts added up, run-time quantiles from all partitions' run times together. The minutes
   * are partition 0's (its master's clock).
   */
  async getMetrics(range: MetricsRange = {}): Promise<MetricsHistory> {
    await this.p.checkMap.fresh();
    return metricsOf(await Promise.all(this.p.set.calls.map((c) => c.readMetrics(range))));
  }

  /** A queue's sweep() on every partition at once, added up (docs/reliability.md). */
  async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    return mergeSweeps(await this.#all((q) => q.sweep(opts)));
  }

  // ---- the queue's state --------------------------------------------------------------

  /** Stops leasing from every partition; adds go on. */
  async pause(): Promise<void> {
    await this.#all((q) => q.pause());
  }

  async resume(): Promise<void> {
    await this.#all((q) => q.resume());
  }

  /** True when every partition is paused. */
  async isPaused(): Promise<boolean> {
    return (await this.counts()).paused;
  }

  /** Closes the queue in every partition (Queue.closeQueue). False when every partition was closed already. */
  async closeQueue(): Promise<boolean> {
    return (await this.#all((q) => q.closeQueue())).some(Boolean);
  }

  /** Opens every partition again. False when none was closed. */
  async reopenQueue(): Promise<boolean> {
    return (await this.#all((q) => q.reopenQueue())).some(Boolean);
  }

  /** Whether some partition is closed (closeQueue() again closes the rest after a failed call). */
  async isQueueClosed(): Promise<boolean> {
    return (await this.#all((q) => q.isQueueClosed())).some(Boolean);
  }

  /**
   * Gives `group` limits of its own (Queue.setGroupOverride). A group's jobs all live in one
   * partition, so the override is kept there and holds exactly.
   */
  async setGroupOverride(group: string, override: GroupOverride | null): Promise<void> {
    assertGroupName(group, 'group');
    await this.p.checkMap.fresh();
    await this.p.set.queues[this.p.set.layout.partitionOfKey(group)]!.setGroupOverride(group, override);
  }

  /** The queue's shared settings and state, from every partition (merge.ts mergeStates). */
  async queueState(): Promise<QueueState> {
    return mergeStates(await this.#all((q) => q.queueState()));
  }

  /**
   * Sets the queue-wide concurrency (Queue.setGlobalConcurrency): each partition gets its share,
   * floor(limit / N) plus one for the first limit mod N, so the fleet never holds more than
   * `limit` at once; a partition at its share while another has room leaves up to N − 1 slots
   * unused. 0 removes it; otherwise at least one per partition (ValidationError).
   */
  async setGlobalConcurrency(limit: number): Promise<void> {
    checkGlobalConcurrency(limit, this.partitions, 'limit');
    await this.p.checkMap.fresh();
    await Promise.all(this.p.set.queues.map((q, i) => q.setGlobalConcurrency(shareOf(limit, this.partitions, i))));
  }

  /** The queue-wide concurrency: the partitions' shares added up (0: none). */
  async getGlobalConcurrency(): Promise<number> {
    return (await this.#all((q) => q.getGlobalConcurrency())).reduce((a, b) => a + b, 0);
  }

  /** The groups with limits of their own, from every partition. */
  async getGroupOverrides(): Promise<Record<string, GroupOverride>> {
    return Object.assign({}, ...(await this.#all((q) => q.getGroupOverrides()))) as Record<string, GroupOverride>;
  }

  // ---- jobs ---------------------------------------------------------------------------

  /** Queue.remove() in the partition that holds the job; false when none does. */
  async remove(id: string, opts: RemoveOptions = {}): Promise<boolean> {
    return this.#onJob(id, false, (q) => q.remove(id, opts));
  }

  /** Queue.cancel() in the partition that holds the job; false when none does. */
  async cancel(id: string, opts: CancelOptions = {}): Promise<CancelResult> {
    return this.#onJob<CancelResult>(id, false, (q) => q.cancel(id, opts));
  }

  /** Queue.retry() in the partition that holds the job (JobNotRetryableError when none does). */
  async retry(id: string): Promise<'completed' | 'dead'> {
    return this.#onJob(id, undefined, (q) => q.retry(id));
  }

  /** Queue.promote() in the partition that holds the job. */
  async promote(id: string): Promise<boolean> {
    return this.#onJob(id, false, (q) => q.promote(id));
  }

  /** Queue.changePriority() in the partition that holds the job: the priority orders it inside its partition. */
  async changePriority(id: string, priority: number, opts: { lifo?: boolean } = {}): Promise<boolean> {
    return this.#onJob(id, false, (q) => q.changePriority(id, priority, opts));
  }

  /** Queue.changeDelay() in the partition that holds the job. */
  async changeDelay(id: string, delayMs: number): Promise<boolean> {
    return this.#onJob(id, false, (q) => q.changeDelay(id, delayMs));
  }

  /** Queue.updateData() by id, in the partition that holds the job (a leased job: through its handler's `job.updateData`). */
  async updateData(id: string, data: Data): Promise<boolean> {
    return this.#onJob(id, false, (q) => q.updateData(id, data));
  }

  /** Queue.clearLogs() in the partition that holds the job. */
  async clearLogs(id: string, opts: { keep?: number } = {}): Promise<number> {
    return this.#onJob(id, 0, (q) => q.clearLogs(id, opts));
  }

  /** The states of one job (Queue.watch), from the partition that holds it. */
  watch(id: string): Observable<JobState | 'gone'> {
    assertJobId(id, 'id');
    return defer(async () => (await this.#holder(id)) ?? this.#firstLook(id)).pipe(switchMap((at) => this.p.set.queues[at]!.watch(id)));
  }

  /** Resolves with the job's result once it completes (Queue.waitForResult). */
  async waitForResult(id: string, opts: { timeoutMs?: number } = {}): Promise<Result | undefined> {
    assertJobId(id, 'id');
    const at = (await this.#holder(id)) ?? this.#firstLook(id);
    return this.p.set.queues[at]!.waitForResult(id, opts);
  }

  /** The id of the job that holds deduplication id `id`, in whichever partition (Queue.getDeduplicationJobId). */
  async getDeduplicationJobId(id: string): Promise<string | null> {
    assertJobId(id, 'id');
    await this.p.checkMap.fresh();
    const first = this.p.set.layout.partitionOfKey(id);
    const kept = await this.p.set.queues[first]!.getDeduplicationJobId(id);
    if (kept !== null || this.partitions === 1) return kept;
    const others = await Promise.all(this.p.set.queues.filter((_, i) => i !== first).map((q) => q.getDeduplicationJobId(id)));
    return others.find((j) => j !== null) ?? null;
  }

  /** Removes deduplication id `id` from every partition; true when one held it. */
  async removeDeduplicationKey(id: string): Promise<boolean> {
    return (await this.#all((q) => q.removeDeduplicationKey(id))).some(Boolean);
  }

  /**
   * Removes every waiting job of every partition (Queue.drain: one atomic call per
   * partition, not one for the queue). Returns the number removed.
   */
  async drain(): Promise<number> {
    return (await this.#all((q) => q.drain())).reduce((a, b) => a + b, 0);
  }

  /**
   * Removes up to `limit` completed or dead jobs (Queue.clean), partition after partition,
   * oldest first inside each, until the limit is reached. Returns their ids.
   */
  async clean(state: CleanState, opts: CleanOptions = {}): Promise<string[]> {
    const resolved = resolveClean(state, opts);
    await this.p.checkMap.fresh();
    const removed: string[] = [];
    for (const q of this.p.set.queues) {
      if (removed.length >= resolved.limit) break;
      removed.push(...(await q.clean(state, { olderThanMs: resolved.olderThanMs, limit: resolved.limit - removed.length })));
    }
    return removed;
  }

  /** Queue.retryDead(): ids go to the partitions that hold them; a filter runs partition after partition up to its limit. */
  async retryDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.#deadOp(target, 'retryDead', (q, t) => q.retryDead(t));
  }

  /** Queue.purgeDead(), as retryDead() finds its dead letters. */
  async purgeDead(target: string[] | DeadLetterFilter): Promise<string[]> {
    return this.#deadOp(target, 'purgeDead', (q, t) => q.purgeDead(t));
  }

  // ---- schedulers: each lives in the partition its id routes to ------------------------

  /**
   * Queue.upsertScheduler() in the partition the scheduler's id routes to: its jobs are added
   * there, one per slot for the whole queue.
   */
  async upsertScheduler(id: string, spec: SchedulerSpec, template?: SchedulerTemplate<Data>): Promise<boolean> {
    assertJobId(id, 'id');
    await this.p.checkMap.fresh();
    return this.p.set.queues[this.p.set.layout.schedulerPartition(id)]!.upsertScheduler(id, spec, template);
  }

  /** Every scheduler of every partition. */
  async getSchedulers(): Promise<Array<SchedulerInfo<Data>>> {
    return (await this.#all((q) => q.getSchedulers())).flat();
  }

  async removeScheduler(id: string): Promise<boolean> {
    assertJobId(id, 'id');
    await this.p.checkMap.fresh();
    return this.p.set.queues[this.p.set.layout.schedulerPartition(id)]!.removeScheduler(id);
  }

  /** One scheduler tick on every partition (Queue.runSchedulers), added up. */
  async runSchedulers(opts: { limit?: number } = {}): Promise<SchedulerTickResult> {
    return mergeTicks(await this.#all((q) => q.runSchedulers(opts)));
  }

  // ---- events -------------------------------------------------------------------------

  /** Job transitions of every partition, as they happen (Queue.events); a partition a resize adds joins the stream. */
  events(): Observable<QueueEvent> {
    const { set } = this.p;
    return defer(() => this.p.checkMap()).pipe(switchMap(() => merge(...set.queues.map((q) => q.events()), set.opened$.pipe(mergeMap((q) => q.events())))));
  }

  /** Resolves once every partition's event subscription is active (Queue.eventsReady). */
  async eventsReady(): Promise<void> {
    await this.p.checkMap();
    await Promise.all(this.p.set.queues.map((q) => q.eventsReady()));
  }

  // ---- helpers ------------------------------------------------------------------------

  /** `op` on every partition at once, after the map's check. */
  async #all<T>(op: (q: Queue<Data, Result>) => Promise<T>): Promise<T[]> {
    await this.p.checkMap.fresh();
    return Promise.all(this.p.set.queues.map(op));
  }

  /** The partition an id is looked for in first: the one a generated id names, else the one it routes to. */
  #firstLook(id: string): number {
    return partitionOfGeneratedId(id, this.partitions) ?? this.p.set.layout.partitionOfKey(id);
  }

  /** The partition that holds job `id` (its first look, then the others at once), or undefined. */
  async #holder(id: string): Promise<number | undefined> {
    await this.p.checkMap.fresh();
    const first = this.#firstLook(id);
    if (await this.p.set.calls[first]!.hasJob(id)) return first;
    if (this.partitions === 1) return undefined;
    const others = this.p.set.queues.map((_, i) => i).filter((i) => i !== first);
    const found = await Promise.all(others.map((i) => this.p.set.calls[i]!.hasJob(id)));
    const k = found.indexOf(true);
    return k < 0 ? undefined : others[k];
  }

  /** `op` in the partition that holds `id`; `missing` when none does (undefined: op's own answer in the first-look partition, e.g. its error). */
  async #onJob<T>(id: string, missing: T | undefined, op: (q: Queue<Data, Result>) => Promise<T>): Promise<T> {
    assertJobId(id, 'id');
    const at = await this.#holder(id);
    if (at === undefined && missing !== undefined) return missing;
    return op(this.p.set.queues[at ?? this.#firstLook(id)]!);
  }

  async #deadOp(target: string[] | DeadLetterFilter, op: string, run: (q: Queue<Data, Result>, t: string[] | DeadLetterFilter) => Promise<string[]>): Promise<string[]> {
    if (Array.isArray(target)) {
      target.forEach((id, i) => assertJobId(id, `ids[${i}]`));
      const at = await Promise.all(target.map((id) => this.#holder(id)));
      const byPart = this.p.set.queues.map((_, i) => target.filter((_, k) => at[k] === i));
      return (await Promise.all(byPart.map((ids, i) => (ids.length === 0 ? [] : run(this.p.set.queues[i]!, ids))))).flat();
    }
    checkDeadFilter(op, target);
    await this.p.checkMap.fresh();
    const done: string[] = [];
    for (const q of this.p.set.queues) {
      if (done.length >= target.limit) break;
      done.push(...(await run(q, { ...target, limit: target.limit - done.length })));
    }
    return done;
  }
}
