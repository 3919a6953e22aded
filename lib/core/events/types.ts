import type { DeduplicationOutcome } from '../adds/types.js';
import type { JobProgress } from '../management/read-types.js';
import type { CleanState } from '../management/types.js';

/** The job transitions scripts publish (`queue.events()`, Nest: `@OnQueueEvent`). */

export type QueueEventType =
  | 'added'
  | 'leased'
  | 'completed'
  | 'failed'
  | 'retried'
  | 'dead'
  | 'stalled'
  | 'promoted'
  /** A delayed job's due time changed (`changeDelay`), or its handler moved it to the delayed set (`job.moveToDelayed`, `job.snooze`): due at runAt. */
  | 'delayed'
  /** A flow's parent waits for its children (docs/flows.md); 'promoted' once they completed. */
  | 'waiting-children'
  | 'removed'
  /**
   * `cancel(id)` of the job (`reason`: the cancel's), followed by what became of it: 'removed',
   * or, for a leased job, its 'failed' / 'retried' / 'dead'.
   */
  | 'cancelled'
  | 'paused'
  | 'resumed'
  | 'closed'
  | 'reopened'
  | 'deleted'
  /** A handler reported progress (`job.updateProgress`). */
  | 'progress'
  /** A handler wrote a log line (`job.log`). */
  | 'log'
  /** A handler met a rate limit: its job is back at the head, its group or queue held back for delayMs. */
  | 'limited'
  /** New stats totals (queues with `stats: true`), after adds or leases. */
  | 'stats'
  /**
   * An add met a deduplication id that job `id` holds (JobOptions.deduplication), and made no
   * job of its own: `outcome` says what became of it.
   */
  | 'deduplicated'
  /** A lease call took the last pending jobs: none is left waiting (delayed jobs aside). */
  | 'drained'
  /** `clean(state)` ran: `count` jobs of `state` removed (each also published as 'removed'). */
  | 'cleaned';

/** One job transition, as published by the script that made it. */
export interface QueueEvent {
  type: QueueEventType;
  queue: string;
  id?: string;
  /** 'added': the job's name (absent for a job added without one). */
  name?: string;
  attempt?: number;
  error?: string;
  delayMs?: number;
  /**
   * 'added' of a delayed job, 'retried' after a delay, 'delayed', 'deduplicated' that replaced a
   * job's due time: when it becomes pending (Redis time, ms).
   */
  runAt?: number;
  reason?: string;
  /**
   * 'completed': what the handler returned (absent when it returned nothing, or when its JSON
   * is over 16 KiB, or the results of one settle call passed 256 KiB: then `resultOmitted` is
   * set and `getJob()` reads it while the job is kept).
   */
  result?: unknown;
  /** 'completed': the result was over 16 KiB of JSON (or its call's over 256 KiB) and left out of the event. */
  resultOmitted?: true;
  /** 'progress': what the handler reported. */
  progress?: JobProgress;
  /** 'log': the line. */
  line?: string;
  /** 'limited': the group held back (absent: the queue). */
  group?: string;
  /** 'stats' after adds: produced totals so far. */
  produced?: { messages: number; bytes: number };
  /** 'stats' after leases: consumed totals so far. */
  consumed?: { messages: number; bytes: number };
  /** 'deduplicated': the deduplication id the add carried. */
  deduplicationId?: string;
  /** 'deduplicated': what became of the add (as its AddResult.deduplicated says). */
  outcome?: DeduplicationOutcome;
  /** 'cleaned': how many jobs the call removed (0 too). */
  count?: number;
  /** 'cleaned': the state cleaned. */
  state?: CleanState;
}
