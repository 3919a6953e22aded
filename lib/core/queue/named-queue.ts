import type { JobDataOf, JobMap, JobName, JobResultOf } from './job-names.js';
import { ValidationError } from '../errors.js';
import type { AddResult, JobOptions } from '../adds/types.js';
import { assertOptions, assertString } from '../validate.js';
import type { PartitionedQueue } from '../partitions/partitioned-queue.js';
import type { Queue } from './queue.js';

/** Job options of a `NamedQueue` add: the name is its own argument. */
export type NamedJobOptions = Omit<JobOptions, 'name'>;

/** One job of `NamedQueue.addBulk`. */
export type NamedBulkJob<M extends JobMap<M>> = { [N in JobName<M>]: { name: N; data: JobDataOf<M, N>; opts?: NamedJobOptions } }[JobName<M>];

/**
 * A queue typed by a map of job name → data (and result): `add('charge', data)` compiles
 * only with a name of the map and that name's data. It adds through the Queue it wraps
 * (`queue`, for everything else; a partitioned one too), as `queue.add(data, { name })` would.
 */
export class NamedQueue<M extends JobMap<M>> {
  constructor(readonly queue: Queue<JobDataOf<M>, JobResultOf<M>> | PartitionedQueue<JobDataOf<M>, JobResultOf<M>>) {}

  get name(): string {
    return this.queue.name;
  }

  /** Adds one job named `name` (BullMQ's argument order). */
  add<N extends JobName<M>>(name: N, data: JobDataOf<M, N>, opts?: NamedJobOptions): Promise<AddResult> {
    return this.queue.add(data, { ...opts, name });
  }

  /** Adds many named jobs in one call (`queue.addBulk`). */
  async addBulk(jobs: ReadonlyArray<NamedBulkJob<M>>): Promise<AddResult[]> {
    // Checked here, not only by the Queue: the map below would drop stray keys and throw a
    // TypeError on a null item before the Queue's own checks could name it.
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', 'addBulk expects an array of { name, data, opts }');
    jobs.forEach((job, i) => {
      assertOptions(`jobs[${i}]`, job, ['name', 'data', 'opts']);
      assertString(`jobs[${i}].name`, job.name, 128);
    });
    return this.queue.addBulk(jobs.map((j) => ({ data: j.data, opts: { ...j.opts, name: j.name } })));
  }

  /** Resolves with the result of the job `id` of name `N` once it completes (`queue.waitForResult`). */
  waitForResult<N extends JobName<M> = JobName<M>>(id: string, opts?: { timeoutMs?: number }): Promise<JobResultOf<M, N> | undefined> {
    return this.queue.waitForResult(id, opts) as Promise<JobResultOf<M, N> | undefined>;
  }
}
