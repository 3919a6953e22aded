import type { JobProgress } from './types.js';

/** The job transitions scripts publish (`queue.events()`, `@OnQueueEvent`). */

export type QueueEventType =
  | 'added'
  | 'leased'
  | 'completed'
  | 'failed'
  | 'retried'
  | 'dead'
  | 'stalled'
  | 'promoted'
  | 'removed'
  | 'paused'
  | 'resumed'
  | 'closed'
  | 'reopened'
  | 'deleted'
  /** A handler reported progress (`job.updateProgress`). */
  | 'progress'
  /** A handler wrote a log line (`job.log`). */
  | 'log'
  /** New stats totals (queues with `stats: true`), after adds or leases. */
  | 'stats';

/** One job transition, as published by the script that made it. */
export interface QueueEvent {
  type: QueueEventType;
  queue: string;
  id?: string;
  attempt?: number;
  error?: string;
  delayMs?: number;
  reason?: string;
  /** 'progress': what the handler reported. */
  progress?: JobProgress;
  /** 'log': the line. */
  line?: string;
  /** 'stats' after adds: produced totals so far. */
  produced?: { messages: number; bytes: number };
  /** 'stats' after leases: consumed totals so far. */
  consumed?: { messages: number; bytes: number };
}
