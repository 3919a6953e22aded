import { CancelledError, JobLeasedError, ValidationError } from '../errors.js';
import { newRequestId } from '../adds/ids.js';
import { MAX_MS, MAX_PRIORITY } from '../defaults.js';
import type { LeaseRef } from '../leases/types.js';
import { assertLease, errorText } from '../settles/settle-items.js';
import type { JobInfo, JobState } from './read-types.js';
import type { CancelOptions, CancelResult, CleanOptions, JobPage, RemoveOptions } from './types.js';
import { assertBoolean, assertInt, assertJobId, assertOptions, toJson } from '../validate.js';
import type { Inspector } from './inspector.js';
import {
  cancelJobScript,
  changeDelayScript,
  changePriorityScript,
  cleanCompletedScript,
  drainScript,
  getJobsScript,
  promoteJobScript,
  removeJobScript,
  retryJobScript,
  updateDataScript,
} from './scripts.js';
import { JobNotRetryableError } from './errors.js';
import { checkJobStates, resolveCancel, resolveClean, resolvePage } from './options.js';
import type { QueueContext } from '../queue/queue-context.js';

/**
 * Job management: pages of jobs by state, removing, cancelling, promoting, retrying,
 * re-prioritising, re-delaying and editing one job, cleaning finished jobs and draining waiting
 * ones. Each change is one script (lib/core/management/remove-job.lua, cancel-job.lua,
 * promote-job.lua, retry-job.lua, change-priority.lua, change-delay.lua, update-data.lua,
 * clean-completed.lua, drain.lua; dead letters through inspector.ts); a job leaves every index
 * at once (lib/core/management/remove.lua).
 */
export class Management<Data, Result> {
  constructor(
    private readonly ctx: QueueContext,
    private readonly inspector: Inspector<Data, Result>,
  ) {}

  /** One page over `states` (one state, or several in the order given). */
  async getJobs(states: JobState | readonly JobState[], page: JobPage): Promise<Array<JobInfo<Data, Result>>> {
    const list = checkJobStates(states);
    const { start, end, order } = resolvePage(page);
    return (await this.ctx.run(getJobsScript, { states: list.join(','), start, end, order, parentQueueOf: this.ctx.parentQueueOf })) as Array<JobInfo<Data, Result>>;
  }

  async remove(id: string, opts: RemoveOptions): Promise<boolean> {
    assertJobId(id, 'id');
    assertOptions('remove options', opts, ['force']);
    const force = opts.force ?? false;
    assertBoolean('force', force);
    const r = await this.ctx.run(removeJobScript, { events: this.ctx.eventsFlag, id, force });
    if (r === 'leased') throw new JobLeasedError(this.ctx.name, id);
    return r === 'removed';
  }

  async cancel(id: string, opts: CancelOptions): Promise<CancelResult> {
    assertJobId(id, 'id');
    const { outcome, reason } = resolveCancel(opts);
    const error = errorText(new CancelledError(id, reason || undefined));
    const r = await this.ctx.run(cancelJobScript, { events: this.ctx.eventsFlag, reqId: newRequestId(), id, outcome, error, reason });
    return r === 'none' ? false : r;
  }

  async promote(id: string): Promise<boolean> {
    assertJobId(id, 'id');
    return this.ctx.run(promoteJobScript, { events: this.ctx.eventsFlag, id });
  }

  async retry(id: string): Promise<'completed' | 'dead'> {
    assertJobId(id, 'id');
    const r = await this.ctx.run(retryJobScript, { events: this.ctx.eventsFlag, id });
    if (r === 'completed' || r === 'dead') return r;
    if (r === 'none') throw new JobNotRetryableError(this.ctx.name, id, undefined, 'no such job (or its retention ended)');
    if (r === '!completed' || r === '!dead') throw new JobNotRetryableError(this.ctx.name, id, r === '!dead' ? 'dead' : 'completed', 'its stored record cannot be decoded');
    throw new JobNotRetryableError(this.ctx.name, id, r, `it is ${r}: only completed and dead jobs are retried`);
  }

  async changePriority(id: string, priority: number, opts: { lifo?: boolean }): Promise<boolean> {
    assertJobId(id, 'id');
    assertInt('priority', priority, { min: -MAX_PRIORITY, max: MAX_PRIORITY });
    assertOptions('changePriority options', opts, ['lifo']);
    const lifo = opts.lifo ?? false;
    assertBoolean('lifo', lifo);
    const state = await this.ctx.run(changePriorityScript, { id, priority, lifo });
    // Known only in Redis; nothing was written, as for any other ValidationError.
    if (state === 'grouped') throw new ValidationError('priority', `job ${id} has a group: it runs FIFO within its group and cannot have a priority`);
    return state !== '' && state !== 'completed';
  }

  async changeDelay(id: string, delayMs: number): Promise<boolean> {
    assertJobId(id, 'id');
    assertInt('delayMs', delayMs, { max: MAX_MS });
    return this.ctx.run(changeDelayScript, { events: this.ctx.eventsFlag, id, delayMs });
  }

  /** By id (refused for a leased job), or through a lease (its token must still hold the job). */
  async updateData(target: string | LeaseRef, data: Data): Promise<boolean> {
    if (typeof target === 'string') assertJobId(target, 'id');
    else assertLease(target);
    const json = toJson('data', data, this.ctx.maxPayloadBytes); // as add() checks it
    const [id, token] = typeof target === 'string' ? [target, ''] : [target.job.id, target.token];
    const r = await this.ctx.run(updateDataScript, { id, token, data: json });
    if (r === 'leased') throw new JobLeasedError(this.ctx.name, id, 'its handler changes its data (job.updateData)');
    return r === 'written';
  }

  async clean(state: unknown, opts: CleanOptions): Promise<string[]> {
    const o = resolveClean(state, opts);
    if (o.state === 'dead') return this.inspector.deadOp('purge', { limit: o.limit, olderThanMs: o.olderThanMs }, true);
    return this.ctx.run(cleanCompletedScript, { events: this.ctx.eventsFlag, olderThanMs: o.olderThanMs, limit: o.limit });
  }

  async drain(): Promise<number> {
    return this.ctx.run(drainScript, { events: this.ctx.eventsFlag });
  }
}
