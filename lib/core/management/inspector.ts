import { DEFAULT_PAGE_SIZE, DEFAULT_SWEEP_LIMIT, MAX_MANAGED, MAX_SWEEP_LIMIT } from '../defaults.js';
import { instruments, observeSweep } from '../instrumentation/index.js';
import { decodeRecord } from '../redis/record.js';
import type { FlowChildren } from '../flows/types.js';
import type { DeadLetter, JobInfo, JobState, QueueCounts, SweepResult } from './read-types.js';
import type { DeadLetterFilter } from './types.js';
import { assertInt, assertJobId, assertOptions } from '../validate.js';
import { toJobInfo } from './job-info.js';
import { checkDeadFilter } from './options.js';
import type { QueueContext } from '../queue/queue-context.js';
import { schedulerCounts } from '../schedulers/counts.js';

/**
 * Reading a queue and tending it: one job's state, per-state counts, pause and resume, the
 * dead letters (list, retry, purge) and the sweep that returns expired leases and promotes
 * due jobs.
 */
export class Inspector<Data, Result> {
  constructor(private readonly ctx: QueueContext) {}

  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    assertJobId(id, 'id');
    const r = (await this.ctx.run('getJob', 'getJob', [id])) as string[];
    if (r.length === 0) return null;
    const [state, record, score, result, progress, children] = r as [JobState, string, string, string, string, string];
    const info = toJobInfo<Data, Result>(id, state, record, score, result, { progress, logs: r.slice(6) });
    if (children) info.children = JSON.parse(children) as FlowChildren; // a parent's (docs/flows.md)
    return info;
  }

  async counts(): Promise<QueueCounts> {
    return decodeCounts((await this.ctx.run('counts', 'counts', [])) as number[]);
  }

  /** counts() and the age of the oldest pending job (ms; undefined when none waits) in one call, for relq/metrics. */
  async countsAndAge(): Promise<{ counts: QueueCounts; oldestPendingAgeMs: number | undefined }> {
    const r = (await this.ctx.run('counts', 'counts', ['1'])) as number[];
    const age = r[10]!; // counts.lua: after waitingChildren when asked for
    return { counts: decodeCounts(r), oldestPendingAgeMs: age >= 0 ? age : undefined };
  }

  async setPaused(paused: boolean): Promise<void> {
    const op = paused ? 'pause' : 'resume';
    await this.ctx.run('pause', op, [this.ctx.eventsFlag, op]);
  }

  async sweep(opts: { limit?: number }): Promise<SweepResult> {
    return (await this.sweepReporting(opts)).result;
  }

  /** The sweep, with the ids of the expired leases it returned (for the Nest 'stalled' event). */
  async sweepReporting(opts: { limit?: number }): Promise<{ result: SweepResult; stalledIds: string[] }> {
    assertOptions('sweep options', opts, ['limit']);
    const limit = opts.limit ?? DEFAULT_SWEEP_LIMIT;
    assertInt('limit', limit, { min: 1, max: MAX_SWEEP_LIMIT });
    const r = (await this.ctx.run('sweep', 'sweep', [this.ctx.eventsFlag, limit])) as [number, number, number, number, number, number, string[]];
    const result = { stalled: r[0], deadLettered: r[1], promoted: r[2], completedRemoved: r[3], dedupForgotten: r[4] };
    if (instruments.length) observeSweep(this.ctx.name, result);
    return { result, stalledIds: r[6] };
  }

  async listDead(opts: { offset?: number; limit?: number }): Promise<Array<DeadLetter<Data>>> {
    assertOptions('listDead options', opts, ['offset', 'limit']);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? DEFAULT_PAGE_SIZE;
    assertInt('offset', offset);
    assertInt('limit', limit, { min: 1, max: MAX_MANAGED });
    const r = (await this.ctx.run('deadLetters', 'listDead', [this.ctx.eventsFlag, 'list', offset, limit])) as string[];
    const out: Array<DeadLetter<Data>> = [];
    for (let i = 0; i < r.length; i += 3) {
      if (!r[i + 1]) continue;
      const { meta, data } = decodeRecord<Data>(r[i + 1]!);
      const dl: DeadLetter<Data> = { id: r[i]!, name: meta.n ?? '', data, failures: meta.f ?? 0, diedAt: Number(r[i + 2]) };
      if (meta.e !== undefined) dl.lastError = meta.e;
      out.push(dl);
    }
    return out;
  }

  /**
   * Redrives (back to pending, fresh attempts) or purges dead letters: the given ids, or the
   * oldest `limit` that pass the filter (name, died at least olderThanMs ago).
   */
  async deadOp(op: 'redrive' | 'purge', target: string[] | DeadLetterFilter): Promise<string[]> {
    let args: Array<string | number>;
    if (Array.isArray(target)) {
      target.forEach((id, i) => assertJobId(id, `ids[${i}]`));
      if (target.length === 0) return [];
      args = [this.ctx.eventsFlag, op, 'ids', 0, ...target];
    } else {
      checkDeadFilter(op === 'redrive' ? 'retryDead' : 'purgeDead', target);
      const { limit, name, olderThanMs } = target;
      args = [this.ctx.eventsFlag, op, 0, limit, olderThanMs ?? '', name === undefined ? '' : `n${name}`];
    }
    return (await this.ctx.run('deadLetters', op, args)) as string[];
  }
}

/** counts.lua's reply: the fields by position, the schedulers' from its end. */
function decodeCounts(r: readonly number[]): QueueCounts {
  return {
    pending: r[0]!,
    working: r[1]!,
    delayed: r[2]!,
    completed: r[3]!,
    dead: r[4]!,
    paused: r[5] === 1,
    ghosts: r[6] ?? 0,
    rateLimitedMs: r[7] ?? 0,
    rateLimitedGroups: r[8] ?? 0,
    waitingChildren: r[9] ?? 0,
    ...schedulerCounts(r),
  };
}
