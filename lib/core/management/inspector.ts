import { DEFAULT_PAGE_SIZE, DEFAULT_SWEEP_LIMIT, MAX_MANAGED, MAX_SWEEP_LIMIT } from '../defaults.js';
import { instruments, observeSweep } from '../instrumentation/index.js';
import type { DeadLetter, JobInfo, QueueCounts, SweepResult } from './read-types.js';
import type { DeadLetterFilter } from './types.js';
import { assertInt, assertJobId, assertOptions } from '../validate.js';
import { checkDeadFilter, checkPriorities } from './options.js';
import type { QueueContext } from '../queue/queue-context.js';
import { sweepScript } from '../leases/scripts.js';
import { pauseQueueScript, resumeQueueScript } from '../settings/scripts.js';
import { countsPerPriorityScript, countsScript, getJobScript, listDeadScript, purgeDeadScript, redriveDeadScript, type DeadTargetArgs } from './scripts.js';

/**
 * Reading a queue and tending it: one job's state, per-state counts, pause and resume, the
 * dead letters (list, retry, purge) and the sweep that returns expired leases and promotes
 * due jobs.
 */
export class Inspector<Data, Result> {
  constructor(private readonly ctx: QueueContext) {}

  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    assertJobId(id, 'id');
    return (await this.ctx.run(getJobScript, { id, parentQueueOf: this.ctx.parentQueueOf })) as JobInfo<Data, Result> | null;
  }

  async counts(): Promise<QueueCounts> {
    return (await this.ctx.run(countsScript, { withAge: false })).counts;
  }

  /** Pending jobs per priority asked for (counts-per-priority.lua), keyed by priority. */
  async countsPerPriority(priorities: readonly number[]): Promise<Record<number, number>> {
    checkPriorities(priorities);
    if (priorities.length === 0) return {};
    const counts = await this.ctx.run(countsPerPriorityScript, { priorities: priorities.join(',') });
    return Object.fromEntries(priorities.map((p, i) => [p, counts[i]!]));
  }

  /** counts() and the age of the oldest pending job (ms; undefined when none waits) in one call, for relq/metrics. */
  async countsAndAge(): Promise<{ counts: QueueCounts; oldestPendingAgeMs: number | undefined }> {
    return this.ctx.run(countsScript, { withAge: true });
  }

  async setPaused(paused: boolean): Promise<void> {
    await this.ctx.run(paused ? pauseQueueScript : resumeQueueScript, { events: this.ctx.eventsFlag });
  }

  async sweep(opts: { limit?: number }): Promise<SweepResult> {
    return (await this.sweepReporting(opts)).result;
  }

  /** The sweep, with the ids of the expired leases it returned (for the Nest 'stalled' event). */
  async sweepReporting(opts: { limit?: number }): Promise<{ result: SweepResult; stalledIds: string[] }> {
    assertOptions('sweep options', opts, ['limit']);
    const limit = opts.limit ?? DEFAULT_SWEEP_LIMIT;
    assertInt('limit', limit, { min: 1, max: MAX_SWEEP_LIMIT });
    const swept = await this.ctx.run(sweepScript, { events: this.ctx.eventsFlag, limit });
    if (instruments.length) observeSweep(this.ctx.name, swept.result);
    return swept;
  }

  async listDead(opts: { offset?: number; limit?: number }): Promise<Array<DeadLetter<Data>>> {
    assertOptions('listDead options', opts, ['offset', 'limit']);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? DEFAULT_PAGE_SIZE;
    assertInt('offset', offset);
    assertInt('limit', limit, { min: 1, max: MAX_MANAGED });
    return (await this.ctx.run(listDeadScript, { offset, limit })) as Array<DeadLetter<Data>>;
  }

  /**
   * Redrives (back to pending, fresh attempts) or purges dead letters: the given ids, or the
   * oldest `limit` that pass the filter (name, died at least olderThanMs ago). `cleaned`: a
   * purge by clean('dead'), which publishes its 'cleaned' event.
   */
  async deadOp(op: 'redrive' | 'purge', target: string[] | DeadLetterFilter, cleaned = false): Promise<string[]> {
    const events = this.ctx.eventsFlag;
    let args: DeadTargetArgs;
    if (Array.isArray(target)) {
      target.forEach((id, i) => assertJobId(id, `ids[${i}]`));
      if (target.length === 0) return [];
      args = { events, ids: target };
    } else {
      checkDeadFilter(op === 'redrive' ? 'retryDead' : 'purgeDead', target);
      const { limit, name, olderThanMs } = target;
      args = { events, limit, olderThanMs, name };
    }
    return op === 'redrive' ? this.ctx.run(redriveDeadScript, args) : this.ctx.run(purgeDeadScript, { ...args, cleaned });
  }
}
