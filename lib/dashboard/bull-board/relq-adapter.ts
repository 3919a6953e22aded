import { BaseAdapter } from '@bull-board/api/dist/queueAdapters/base.js';
import type {
  AppJobScheduler,
  JobCleanStatus,
  JobCounts,
  JobSchedulerUpdateResult,
  JobStatus,
  QueueAdapterOptions,
  QueueJob,
  QueueJobOptions,
  QueueMetrics,
  Status,
} from '@bull-board/api/dist/types.js';
import { MAX_MANAGED } from '../../core/defaults.js';
import type { Queue } from '../../core/queue/queue.js';
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
 * with a clear error or left empty: cleaning waiting or active jobs, editing schedulers, and BullMQ's metrics (relq keeps no per-minute
 * totals; relq's own dashboard charts throughput).
 */
export class RelqBullBoardAdapter extends BaseAdapter {
  private handle: ClientHandle | undefined;
  /** The counts() read in flight (see sharedCounts). */
  private counting: Promise<QueueCounts> | undefined;

  constructor(
    private readonly queue: Queue<unknown, unknown>,
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

  async getMetrics(): Promise<QueueMetrics> {
    return { meta: { count: 0, prevTS: 0, prevCount: 0 }, data: [], count: 0 };
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
