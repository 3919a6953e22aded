import type { AnyQueue } from '../core/queue/any-queue.js';
import { mergeCounts } from '../core/partitions/merge.js';
import { PartitionedQueue } from '../core/partitions/partitioned-queue.js';
import type { JobState, QueueCounts } from '../core/management/read-types.js';
import type { CleanState, JobOrder } from '../core/management/types.js';
import type { GroupOverride } from '../core/settings/concurrency.js';
import type { WorkerInfo } from '../core/workers/types.js';
import { MAX_PAGE } from './defaults.js';
import { HttpError, publicMessage } from './http.js';
import { summarize, type JobSummary } from './job-summary.js';
import type { Throughput, ThroughputRecorder } from './throughput.js';

/** A queue on the overview: its counts, or why they could not be read. */
export interface QueueOverview {
  name: string;
  counts?: QueueCounts;
  /** A partitioned queue's counts, partition by partition (`counts` adds them up). */
  partitions?: QueueCounts[];
  error?: string;
}

/** A queue's shared concurrency limits (`GET queues/<name>/settings`). */
export interface QueueLimits {
  /** 0: none */
  globalConcurrency: number;
  /** 0: none */
  groupConcurrency: number;
  groupOverrides: Record<string, GroupOverride>;
}

/**
 * A page of jobs in one state. How many the state holds is in the overview's counts
 * (`GET queues`), which the page reads in the same refresh: a page costs no counts call.
 */
export interface JobList {
  state: JobState;
  start: number;
  end: number;
  jobs: JobSummary[];
}

/** One queue and its throughput recorder. @internal */
export interface Watched {
  queue: AnyQueue;
  recorder: ThroughputRecorder;
}

/** The reads of the JSON API. @internal */
export const reads = {
  async overview(queues: Iterable<Watched>): Promise<QueueOverview[]> {
    return Promise.all(
      [...queues].map(async ({ queue }) => {
        try {
          if (queue instanceof PartitionedQueue) {
            const partitions = await queue.countsByPartition();
            return { name: queue.name, counts: mergeCounts(partitions), partitions };
          }
          return { name: queue.name, counts: await queue.counts() };
        } catch (err) {
          return { name: queue.name, error: publicMessage(err) };
        }
      }),
    );
  },

  /** The limits the fleet shares: queue-wide and per group (changed by the concurrency actions). */
  async settings(w: Watched): Promise<QueueLimits> {
    const s = await w.queue.queueState();
    return { globalConcurrency: s.globalConcurrency, groupConcurrency: s.groupConcurrency, groupOverrides: s.groupOverrides };
  },

  /** From the queue's metrics history when it keeps one (one read), else this process's recorder. */
  async throughput(w: Watched): Promise<Throughput> {
    const history = await w.queue.getMetrics({ from: w.recorder.historyFrom });
    return history.keepMinutes > 0 ? w.recorder.fromHistory(history) : w.recorder.snapshot();
  },

  /** The queue's live workers (queue.getWorkers()), from every process. */
  workers(w: Watched): Promise<WorkerInfo[]> {
    return w.queue.getWorkers();
  },

  async jobs(w: Watched, query: URLSearchParams): Promise<JobList> {
    // getJobs checks the state, the order and that end >= start (a ValidationError: 400)
    const state = (query.get('state') ?? 'pending') as JobState;
    const start = intParam(query, 'start', 0);
    const end = intParam(query, 'end', start + 19);
    if (end - start >= MAX_PAGE) throw new HttpError(400, `a page is at most ${MAX_PAGE} jobs`);
    const order = query.get('order');
    const jobs = await w.queue.getJobs(state, { start, end, ...(order === null ? {} : { order: order as JobOrder }) });
    return { state, start, end, jobs: jobs.map(summarize) };
  },
};

/** The actions of the JSON API: each one engine call. @internal */
export const actions: Record<string, (queue: AnyQueue, body: Record<string, unknown>, id?: string) => Promise<unknown>> = {
  retry: async (q, body, id) => (pick(body, []), { retried: true, from: await q.retry(id!) }),
  remove: async (q, body, id) => ({ removed: await q.remove(id!, pick(body, ['force'])) }),
  cancel: async (q, body, id) => ({ cancelled: await q.cancel(id!, pick(body, ['outcome', 'reason'])) }),
  promote: async (q, body, id) => (pick(body, []), { promoted: await q.promote(id!) }),
  pause: async (q, body) => (pick(body, []), { paused: (await q.pause(), true) }),
  resume: async (q, body) => (pick(body, []), { paused: (await q.resume(), false) }),
  redrive: async (q, body) => ({ ids: await q.retryDead(pick(body, ['limit', 'name', 'olderThanMs']) as { limit: number }) }),
  concurrency: async (q, body) => {
    const { limit } = pick(body, ['limit']);
    await q.setGlobalConcurrency(limit as number);
    return { globalConcurrency: limit };
  },
  groupOverride: async (q, body) => {
    const { group, override } = pick(body, ['group', 'override']);
    await q.setGroupOverride(group as string, (override ?? null) as GroupOverride | null);
    return { group, override: override ?? null };
  },
  clean: async (q, { state, ...rest }) => ({ ids: await q.clean(state as CleanState, pick(rest, ['limit', 'olderThanMs'])) }),
};

/** The actions about one job (`.../jobs/<id>/<action>`); the others are about the queue. */
export const JOB_ACTIONS = new Set(['retry', 'remove', 'cancel', 'promote']);

function intParam(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw new HttpError(400, `${name} must be a whole number`);
  return Number(raw);
}

/** The fields of `body` the engine call takes (the engine checks their values). */
function pick(body: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const unknown = Object.keys(body).filter((k) => !keys.includes(k));
  if (unknown.length > 0) throw new HttpError(400, `unknown field(s) ${unknown.join(', ')}; allowed: ${keys.join(', ') || 'none'}`);
  return Object.fromEntries(keys.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]));
}
