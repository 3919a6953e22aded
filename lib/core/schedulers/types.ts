import type { JobOptions } from '../adds/types.js';

/** Public types of job schedulers (docs/schedulers.md). */

/**
 * What a scheduler does with slots that passed while no tick could add their jobs (every
 * process down, or ticks further apart than the slots): 'once' adds one job for them, due at
 * once (the latest missed slot's); 'skip' adds none. Either way the next slot to come follows.
 * The job of the slot that was already due when the ticks stopped is not missed: it was
 * queued ahead of time and runs, late.
 */
export type MissedPolicy = 'once' | 'skip';

/** What cron and interval schedulers share. */
export interface SchedulerBounds {
  /** No slot before this time (epoch ms or Date). For `everyMs`, slots are `startAt + k × everyMs`. */
  startAt?: number | Date;
  /** No slot after this time (epoch ms or Date); the scheduler then ends (it stays listed). */
  endAt?: number | Date;
  /** At most this many jobs in all (catch-up jobs included); then the scheduler ends. */
  limit?: number;
  /** Slots missed while nothing ticked. Default 'once'. */
  missed?: MissedPolicy;
}

/** Slots from a cron expression (5 fields, or 6 with seconds first), in `tz`. */
export interface CronSchedule extends SchedulerBounds {
  cron: string;
  /** IANA time zone, e.g. 'Europe/Paris'. Default 'UTC'. */
  tz?: string;
}

/**
 * A slot every `everyMs` (at least 100). Slots are aligned on `startAt`, or on multiples of
 * `everyMs` since the epoch, so every process computes the same ones.
 */
export interface EverySchedule extends SchedulerBounds {
  everyMs: number;
}

export type SchedulerSpec = CronSchedule | EverySchedule;

/** Options of a scheduler's jobs: a job's options but those the scheduler sets (id and time), and `deduplication` (one job per slot already). */
export type SchedulerJobOptions = Omit<JobOptions, 'jobId' | 'delayMs' | 'runAt' | 'lifo' | 'waitMs' | 'deduplication'>;

/** The job each slot adds. */
export interface SchedulerTemplate<Data = unknown> {
  data?: Data;
  opts?: SchedulerJobOptions;
}

/** A scheduler as stored (`getSchedulers()`). */
export interface SchedulerInfo<Data = unknown> {
  id: string;
  /** As given, times as epoch ms, `missed` filled in. */
  spec: SchedulerSpec & { missed: MissedPolicy };
  template: SchedulerTemplate<Data>;
  /** Epoch ms (Redis clock) of the next slot, whose job is already queued (delayed); null once ended. */
  nextRunAt: number | null;
  /** Jobs made so far (under this spec: an upsert that changes it starts again at 0). */
  made: number;
}

/** What one tick did (`runSchedulers()`). */
export interface SchedulerTickResult {
  /** Schedulers this call moved on to their next slot (the others were moved by another process). */
  advanced: number;
  /** Jobs added (catch-up jobs included). */
  added: number;
  /** Redis time of the tick (ms). */
  now: number;
  /** Redis time of the earliest next slot still to come (null: none): when a tick is next needed. */
  nextDueAt: number | null;
}

/** Options of a `SchedulerTicker`. */
export interface SchedulerTickerOptions {
  /**
   * Longest wait between ticks (it otherwise wakes when the earliest next slot comes due):
   * how soon schedulers upserted by other processes are seen. Default 1 000.
   */
  maxIntervalMs?: number;
  /** Called with a failed tick's error (the ticker retries at the next interval). Default: ignored. */
  onError?: (err: unknown) => void;
}
