import { JobLeasedError, ValidationError } from '../errors.js';
import { MAX_PRIORITY } from '../defaults.js';
import type { JobInfo, JobState } from './read-types.js';
import type { CleanOptions, JobPage, RemoveOptions } from './types.js';
import { assertBoolean, assertInt, assertJobId, assertOptions } from '../validate.js';
import type { Inspector } from './inspector.js';
import { toJobInfo } from './job-info.js';
import { checkJobState, resolveClean, resolvePage } from './options.js';
import type { QueueContext } from '../queue/queue-context.js';

/**
 * Job management: pages of jobs by state, removing, promoting and re-prioritising one job,
 * cleaning finished jobs and draining waiting ones. Each change is one script
 * (lib/core/management/remove-job.lua, promote-job.lua, change-priority.lua, clean-completed.lua,
 * drain.lua; dead letters through inspector.ts); a job leaves every index at once
 * (lib/core/management/remove.lua).
 */
export class Management<Data, Result> {
  constructor(
    private readonly ctx: QueueContext,
    private readonly inspector: Inspector<Data, Result>,
  ) {}

  async getJobs(state: JobState, page: JobPage): Promise<Array<JobInfo<Data, Result>>> {
    checkJobState(state);
    const { start, end, order } = resolvePage(page);
    const r = (await this.ctx.run('getJobs', 'getJobs', [state, start, end, order])) as string[];
    const out: Array<JobInfo<Data, Result>> = [];
    for (let i = 0; i < r.length; i += 4) {
      if (r[i + 1] === '') continue; // an id whose record is gone (a ghost)
      out.push(toJobInfo<Data, Result>(r[i]!, state, r[i + 1]!, r[i + 2]!, r[i + 3]));
    }
    return out;
  }

  async remove(id: string, opts: RemoveOptions): Promise<boolean> {
    assertJobId(id, 'id');
    assertOptions('remove options', opts, ['force']);
    const force = opts.force ?? false;
    assertBoolean('force', force);
    const r = await this.ctx.run('removeJob', 'remove', [this.ctx.eventsFlag, id, force ? '1' : '0']);
    if (r === 'leased') throw new JobLeasedError(this.ctx.name, id);
    return r === 1;
  }

  async promote(id: string): Promise<boolean> {
    assertJobId(id, 'id');
    return (await this.ctx.run('promoteJob', 'promote', [this.ctx.eventsFlag, id])) === 1;
  }

  async changePriority(id: string, priority: number): Promise<boolean> {
    assertJobId(id, 'id');
    assertInt('priority', priority, { min: -MAX_PRIORITY, max: MAX_PRIORITY });
    const state = (await this.ctx.run('changePriority', 'changePriority', [id, priority])) as string;
    // Known only in Redis; nothing was written, as for any other ValidationError.
    if (state === 'grouped') throw new ValidationError('priority', `job ${id} has a group: it runs FIFO within its group and cannot have a priority`);
    return state !== '' && state !== 'completed';
  }

  async clean(state: unknown, opts: CleanOptions): Promise<string[]> {
    const o = resolveClean(state, opts);
    if (o.state === 'dead') return this.inspector.deadOp('purge', { limit: o.limit, olderThanMs: o.olderThanMs });
    return (await this.ctx.run('cleanCompleted', 'clean', [this.ctx.eventsFlag, o.olderThanMs, o.limit])) as string[];
  }

  async drain(): Promise<number> {
    return (await this.ctx.run('drain', 'drain', [this.ctx.eventsFlag])) as number;
  }
}
