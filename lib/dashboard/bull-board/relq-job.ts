import type { AnyQueue } from '../../core/queue/any-queue.js';
import type { JobState as BoardJobState, JobStatus, QueueJob, QueueJobJson } from '@bull-board/api/dist/types.js';
import type { JobInfo, JobState } from '../../core/management/read-types.js';

/** relq's states as bull-board's statuses: a dead letter is a failed job, a leased one active. */
export const BOARD_STATUS: Record<JobState, JobStatus> = {
  pending: 'waiting',
  working: 'active',
  delayed: 'delayed',
  completed: 'completed',
  dead: 'failed',
  'waiting-children': 'waiting-children',
};

/** bull-board's statuses relq has, back to relq's states ('prioritized' and 'paused' it has not). */
export const RELQ_STATE = Object.fromEntries(Object.entries(BOARD_STATUS).map(([s, b]) => [b, s])) as Partial<Record<JobStatus, JobState>>;

/**
 * One relq job as bull-board's job object: read once (getJob / getJobs), its actions each one
 * engine call. @internal
 */
export class RelqBoardJob implements QueueJob {
  readonly opts: { delay?: number };
  /** Not in bull-board's QueueJob, but its flow route reads it, as a BullMQ job has it. */
  readonly id: string;

  constructor(
    private readonly queue: AnyQueue,
    private readonly job: JobInfo<unknown, unknown>,
  ) {
    this.id = this.job.id;
    this.opts = this.job.runAt === undefined ? {} : { delay: Math.max(0, this.job.runAt - this.job.createdAt) };
  }

  async promote(): Promise<void> {
    if (!(await this.queue.promote(this.job.id))) throw new Error(`job ${this.job.id} is not delayed`);
  }

  async remove(): Promise<void> {
    await this.queue.remove(this.job.id);
  }

  /** A dead letter (failed) or a completed job runs again: `queue.retry()`, which refuses any other (JobNotRetryableError). */
  async retry(): Promise<void> {
    await this.queue.retry(this.job.id);
  }

  /** bull-board's data editor: `updateData(id, data)`, which refuses a leased job (JobLeasedError: its handler owns it). */
  async updateData(jobData: Record<string, unknown>): Promise<void> {
    if (!(await this.queue.updateData(this.job.id, jobData))) throw new Error(`job ${this.job.id} no longer exists`);
  }

  /** A delayed job due `delay` ms from now (`changeDelay`; bull-board computes it from the runAt its page chose). */
  async changeDelay(delay: number): Promise<void> {
    if (!(await this.queue.changeDelay(this.job.id, Math.round(delay)))) throw new Error(`job ${this.job.id} is not delayed`);
  }

  /** relq's priority, as this adapter shows it (-1000 to 1000, higher first), and lifo. */
  async changePriority(opts: { priority?: number; lifo?: boolean }): Promise<void> {
    const changed = await this.queue.changePriority(this.job.id, opts.priority ?? this.job.priority, opts.lifo === undefined ? {} : { lifo: opts.lifo });
    if (!changed) throw new Error(`job ${this.job.id} no longer waits to run`);
  }

  async getState(): Promise<BoardJobState> {
    const now = await this.queue.getJob(this.job.id);
    return now ? BOARD_STATUS[now.state] : 'unknown';
  }

  toJSON(): QueueJobJson {
    const j = this.job;
    return {
      id: j.id,
      name: j.name,
      progress: j.progress ?? 0,
      attemptsMade: j.dequeues,
      finishedOn: j.finishedOn ?? null,
      processedOn: j.processedOn ?? null,
      timestamp: j.createdAt,
      failedReason: j.lastError ?? '',
      stacktrace: [],
      data: j.data,
      returnvalue: j.result ?? null,
      opts: { attempts: j.maxAttempts, priority: j.priority, ...this.opts, ...(j.group === undefined ? {} : { group: { id: j.group } }) },
      ...this.opts,
      priority: j.priority,
    };
  }
}
