import { parseRateLimit } from '../rate-limits/stored.js';
import { parseGroupOverrides, type GroupOverride } from './concurrency.js';
import { queueScript, type EventsFlag } from '../redis/script-def.js';
import type { RateLimit } from '../rate-limits/types.js';
import type { QueueStats } from './types.js';

/** A queue's shared settings and state, as stored in Redis. */
export interface QueueState {
  closed: boolean;
  /** 0: unbounded */
  bound: number;
  /** 0: no per-group limit */
  groupConcurrency: number;
  stats: boolean;
  /** Producers blocked on the full queue (registrations not yet expired). */
  waitingProducers: number;
  /** The stored rate limits (undefined: none; max 0: only holds from job.rateLimit). */
  limiter: RateLimit | undefined;
  groupLimiter: RateLimit | undefined;
  /** 0: no queue-wide limit */
  globalConcurrency: number;
  /** Groups with limits of their own, by group. */
  groupOverrides: Record<string, GroupOverride>;
  /** Minutes of metrics history kept (`metrics` option, `getMetrics()`); 0: none. */
  metricsKeepMinutes: number;
}

/** A settings call's answer on a deleted queue (settings/tombstone.lua). */
type Deleted = 'deleted';

/** A Queue object's settings as stored: '' leaves one alone, '0' removes it. */
export interface StoredSettings {
  bound: string;
  stats: string;
  glimit: string;
  rl: string;
  grl: string;
  gc: string;
  /** JSON of group -> { c?, r? } (settings/concurrency.ts), '' none */
  govr: string;
  /** minutes of metrics history kept (metrics-history/history.lua) */
  mx: string;
}

/** Stores a Queue object's settings (configure-queue.lua). */
export const configureQueueScript = queueScript({
  name: 'configureQueue',
  file: 'settings/configure-queue.lua',
  ops: ['configure'],
  creates: true,
  encode: (a: { events: EventsFlag } & StoredSettings) => [a.events, a.bound, a.stats, a.glimit, a.rl, a.grl, a.gc, a.govr, a.mx],
  decode: (reply): 1 | Deleted => (reply === 'deleted' ? 'deleted' : 1),
});

/** Closes the queue for adds (close-queue.lua): true when it was open. */
export const closeQueueScript = queueScript({
  name: 'closeQueue',
  file: 'settings/close-queue.lua',
  ops: ['closeQueue'],
  creates: true,
  encode: (a: { events: EventsFlag }) => [a.events],
  decode: (reply): boolean | Deleted => (reply === 'deleted' ? 'deleted' : reply === 1),
});

/** Opens the queue for adds again (reopen-queue.lua): true when it was closed. */
export const reopenQueueScript = queueScript({
  name: 'reopenQueue',
  file: 'settings/reopen-queue.lua',
  ops: ['reopenQueue'],
  creates: true,
  encode: (a: { events: EventsFlag }) => [a.events],
  decode: (reply): boolean | Deleted => (reply === 'deleted' ? 'deleted' : reply === 1),
});

/** The queue's settings and live waiters (queue-state.lua). */
export const queueStateScript = queueScript({
  name: 'queueState',
  file: 'settings/queue-state.lua',
  ops: ['queueState'],
  encode: () => [],
  decode: (reply): QueueState | Deleted => {
    if (reply === 'deleted') return 'deleted';
    const [closed, bound, glimit, stats, waiters, rl, grl, gc, govr, mx] = reply as [number, number, number, number, number, string, string, number, Array<string | number>, number];
    return {
      closed: closed === 1,
      bound,
      groupConcurrency: glimit,
      stats: stats === 1,
      waitingProducers: waiters,
      limiter: parseRateLimit(rl),
      groupLimiter: parseRateLimit(grl),
      globalConcurrency: gc,
      groupOverrides: parseGroupOverrides(govr),
      metricsKeepMinutes: mx,
    };
  },
});

/** The queue's counted totals (queue-stats.lua). */
export const queueStatsScript = queueScript({
  name: 'queueStats',
  file: 'settings/queue-stats.lua',
  ops: ['stats'],
  encode: () => [],
  decode: (reply): QueueStats => {
    const [pm, pb, cm, cb, on] = reply as [number, number, number, number, number];
    return { enabled: on === 1, produced: { messages: pm, bytes: pb }, consumed: { messages: cm, bytes: cb } };
  },
});

/** Stops leasing; adds go on (pause-queue.lua). */
export const pauseQueueScript = queueScript({
  name: 'pauseQueue',
  file: 'settings/pause-queue.lua',
  ops: ['pause'],
  creates: true,
  encode: (a: { events: EventsFlag }) => [a.events],
  decode: () => undefined,
});

/** Restarts leasing (resume-queue.lua). */
export const resumeQueueScript = queueScript({
  name: 'resumeQueue',
  file: 'settings/resume-queue.lua',
  ops: ['resume'],
  creates: true,
  encode: (a: { events: EventsFlag }) => [a.events],
  decode: () => undefined,
});

/** Deletes the queue and leaves its tombstone (delete-queue.lua): the number of keys removed. */
export const deleteQueueScript = queueScript({
  name: 'deleteQueue',
  file: 'settings/delete-queue.lua',
  ops: ['deleteQueue'],
  encode: (a: { events: EventsFlag; tombstoneMs: number }) => [a.events, a.tombstoneMs],
  decode: (reply) => reply as number,
});

export const SETTINGS_SCRIPTS = [
  configureQueueScript,
  closeQueueScript,
  reopenQueueScript,
  queueStateScript,
  queueStatsScript,
  pauseQueueScript,
  resumeQueueScript,
  deleteQueueScript,
] as const;
