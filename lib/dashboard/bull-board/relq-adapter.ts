import type { AnyQueue } from '../../core/queue/any-queue.js';
import { BaseAdapter } from '@bull-board/api/dist/queueAdapters/base.js';
import type {
  AppJobScheduler,
  JobCleanStatus,
  JobCounts,
  JobSchedulerUpdateResult,
  JobStatus,
  MetricsType,
  QueueAdapterOptions,
  QueueJob,
  QueueJobOptions,
  QueueMetrics,
  Status,
} from '@bull-board/api/dist/types.js';
import { DEFAULT_METRICS_KEEP_MINUTES, MAX_MANAGED } from '../../core/defaults.js';
import type { MetricsHistory } from '../../core/metrics-history/types.js';
import { boundedCall, openConnection, type ClientHandle } from '../../core/redis/connection.js';
import { wrapRedisError } from '../../core/redis/redis-errors.js';
import type { QueueCounts } from '../../core/management/read-types.js';
import type { JobState } from '../../core/management/read-types.js';
import { BOARD_STATUS, RELQ_STATE, RelqBoardJob } from './relq-job.js';
/** Jobs per engine call when cleaning or promoting a whole state. */
const BATCH = 1000;

/**
 * A relq queue on bull-board (`createBullBoard({ queues: [new RelqBullBoardAdapter(queue)] })`).
 * Each method is one engine call or a short loop of them. What relq does not have is refused
 * with a clear error or left empty: cleaning waiting or active jobs, editing schedulers, and
 * the metrics of a queue without the `metrics` option (its metrics history,
 * `queue.getMetrics()`, feeds bull-board's metrics tab).
 */
export class RelqBullBoardAdapter extends BaseAdapter {
  private handle: ClientHandle | undefined;
  /** The counts() read in flight (see sharedCounts). */
  private counting: Promise<QueueCounts> | undefined;
  /** The getMetrics() read in flight (see sharedHistory), and the minutes the queue kept at the last one. */
  private reading: Promise<MetricsHistory> | undefined;
  private keptMinutes = DEFAULT_METRICS_KEEP_MINUTES;

  constructor(
    private readonly queue: AnyQueue,
    options: Partial<QueueAdapterOptions> = {},
  ) {
    super('bullmq', options);
  }

  getName(): string {
    return `${this.prefix}${this.queue.name}`;
  }

  /**
   * The name bull-board keys a BullMQ queue by to find a job's flow parent (a BullMQ job's
   * `opts.parent.queue`). relq's jobs name no parent there, so it only needs to be none of
   * BullMQ's (`<prefix>:<name>`) on a board that shows both.
   */
  getQueueQualifiedName(): string {
    return `relq:${this.getName()}`;
  }

  /** None: bull-board reads a flow tree through BullMQ's FlowProducer, so it shows a relq job without one. */
  async getFlowProducer(): Promise<null> {
    return null;
  }

  getStatuses(): Status[] {
    return ['latest', ...this.getJobStatuses()];
  }

  getJobStatuses(): JobStatus[] {
    return Object.values(BOARD_STATUS);
  }

  /**
   * bull-board asks for the counts, the pause state and the number of schedulers together on
   * every poll of every queue: one counts() read answers the three.
   */
  private sharedCounts(): Promise<QueueCounts> {
    this.counting ??= this.queue.counts().finally(() => (this.counting = undefined));
    return this.counting;
  }

  async getJobCounts(): Promise<JobCounts> {
    const c = await this.sharedCounts();
    const counts: Record<string, number> = { active: c.working, waiting: c.pending, delayed: c.delayed, completed: c.completed, failed: c.dead, 'waiting-children': c.waitingChildren };
    return counts as JobCounts;
  }

  /**
   * Newest first in each status, as BullMQ lists them; several statuses one after the other.
   * bull-board's "to the end" (-1) reads relq's largest page.
   */
  async getJobs(statuses: JobStatus[], start = 0, end = -1): Promise<QueueJob[]> {
    const last = end < 0 ? start + MAX_MANAGED - 1 : Math.min(end, start + MAX_MANAGED - 1);
    const states = statuses.map((s) => RELQ_STATE[s]).filter((s): s is JobState => s !== undefined);
    const pages = await Promise.all(states.map((state) => this.queue.getJobs(state, { start, end: last, order: 'desc' })));
    return pages.flat().map((j) => new RelqBoardJob(this.queue, j));
  }

  async getJob(id: string): Promise<QueueJob | null> {
    const job = await this.queue.getJob(id);
    return job ? new RelqBoardJob(this.queue, job) : null;
  }

  async getJobLogs(id: string): Promise<string[]> {
    return (await this.queue.getJob(id))?.logs ?? [];
  }

  async addJob(name: string, data: unknown, options: QueueJobOptions): Promise<QueueJob> {
    const { id } = await this.queue.add(data, {
      ...(name ? { name } : {}),
      ...(options.delay ? { delayMs: options.delay } : {}),
      ...(options.attempts ? { attempts: options.attempts } : {}),
    });
    return (await this.getJob(id))!;
  }

  /** Completed jobs and dead letters (bull-board's failed) finished at least `graceTimeMs` ago. */
  async clean(status: JobCleanStatus, graceTimeMs: number): Promise<void> {
    if (status !== 'completed' && status !== 'failed') throw new Error(`relq cleans completed and failed (dead) jobs, not ${status} ones`);
    const state = status === 'failed' ? 'dead' : 'completed';
    while ((await this.queue.clean(state, { olderThanMs: graceTimeMs, limit: BATCH })).length === BATCH);
  }

  async promoteAll(): Promise<void> {
    for (;;) {
      const due = await this.queue.getJobs('delayed', { start: 0, end: BATCH - 1 });
      const promoted = await Promise.all(due.map((j) => this.queue.promote(j.id)));
      if (due.length < BATCH || !promoted.includes(true)) return;
    }
  }

  async isPaused(): Promise<boolean> {
    return (await this.sharedCounts()).paused;
  }

  pause(): Promise<void> {
    return this.queue.pause();
  }

  resume(): Promise<void> {
    return this.queue.resume();
  }

  async empty(): Promise<void> {
    await this.queue.drain();
  }

  /**
   * Deletes the queue; refused while jobs are leased unless `force`. Best-effort: the check
   * and the delete are two calls, so a lease taken between them is deleted with the queue.
   */
  async obliterate({ force = false }: { force?: boolean } = {}): Promise<void> {
    // bull-board answers 409 (not 500) for exactly this text
    if (!force && (await this.queue.counts()).working > 0) throw new Error('Cannot obliterate queue with active jobs');
    await this.queue.deleteQueue();
  }

  /** The server's INFO, under relq's reply deadline; a failure is a relq error with no secret in it. */
  async getRedisInfo(): Promise<string> {
    // The queue's own client, as a client passed in: relq's handle of it, never closed here.
    this.handle ??= openConnection(this.queue.client);
    try {
      return await boundedCall(this.handle, this.handle.client.info());
    } catch (err) {
      throw wrapRedisError(err, 'getRedisInfo', this.handle);
    }
  }

  /**
   * BullMQ's getMetrics from the queue's metrics history: `data` the per-minute counts, newest
   * first, positions `start` to `end` (-1: the last) of the minutes kept; `meta.count` their
   * sum (relq keeps no count since the queue's beginning). bull-board's completed is relq's
   * completed, its failed relq's dead (as in getJobCounts). Empty for a queue without the
   * `metrics` option.
   */
  async getMetrics(type: MetricsType, start = 0, end = -1): Promise<QueueMetrics> {
    const history = await this.sharedHistory();
    if (history.keepMinutes === 0) return { meta: { count: 0, prevTS: 0, prevCount: 0 }, data: [], count: 0 };
    // the minutes kept and the current one (a first read may reach further back)
    const points = history.points.slice(-(history.keepMinutes + 1));
    const all = points.map((p) => (type === 'completed' ? p.completed : p.dead)).reverse();
    const count = all.reduce((s, n) => s + n, 0);
    const data = all.slice(start, end < 0 ? all.length + 1 + end : end + 1);
    return { meta: { count, prevTS: points.at(-1)!.at, prevCount: count - all[0]! }, data, count: all.length };
  }

  /** bull-board asks for completed and failed together: one read of the kept minutes answers both. */
  private sharedHistory(): Promise<MetricsHistory> {
    this.reading ??= this.queue
      .getMetrics({ from: Date.now() - this.keptMinutes * 60_000 })
      .then((h) => {
        if (h.keepMinutes > 0) this.keptMinutes = h.keepMinutes;
        return h;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  async getJobSchedulers(): Promise<Array<Omit<AppJobScheduler, 'queueName'>>> {
    return (await this.queue.getSchedulers()).map((s) => {
      const { spec } = s;
      const start = spec.startAt === undefined ? undefined : Number(spec.startAt);
      const endAt = spec.endAt === undefined ? undefined : Number(spec.endAt);
      return {
        id: s.id,
        name: s.template.opts?.name ?? '',
        ...('cron' in spec ? { pattern: spec.cron, ...(spec.tz ? { tz: spec.tz } : {}) } : { every: spec.everyMs }),
        ...(spec.limit === undefined ? {} : { limit: spec.limit }),
        ...(start === undefined ? {} : { startDate: start }),
        ...(endAt === undefined ? {} : { endDate: endAt }),
        ...(s.nextRunAt === null ? {} : { next: s.nextRunAt }),
        iterationCount: s.made,
        template: { data: s.template.data, opts: { ...s.template.opts } },
      };
    });
  }

  async getJobSchedulersCount(): Promise<number> {
    return (await this.sharedCounts()).schedulers ?? 0;
  }

  removeJobScheduler(id: string): Promise<boolean> {
    return this.queue.removeScheduler(id);
  }

  // supportsJobSchedulerUpdate and supportsJobSchedulerRun stay false: bull-board never calls these.
  updateJobScheduler(): Promise<JobSchedulerUpdateResult> {
    return Promise.reject(new Error('relq schedulers are changed with queue.upsertScheduler()'));
  }

  runJobSchedulerNow(): Promise<QueueJob | 'not-found'> {
    return Promise.reject(new Error('relq runs a scheduler only at its slots'));
  }

  /** The queue-wide concurrency (docs/concurrency.md); null when there is none. */
  async getGlobalConcurrency(): Promise<number | null> {
    return (await this.queue.getGlobalConcurrency()) || null;
  }

  setGlobalConcurrency(concurrency: number): Promise<void> {
    return this.queue.setGlobalConcurrency(concurrency);
  }
}
