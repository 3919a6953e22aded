import type { QueueEvent } from '../../core/events/types.js';
import type { JobProgress } from '../../core/management/read-types.js';
import type { CleanState } from '../../core/management/types.js';

/**
 * The queue events a `@QueueEventsListener()` method can listen to, with BullMQ's names and
 * BullMQ-shaped first arguments; the second argument is relq's event itself.
 */
export interface QueueListenerEvents {
  /** A worker leased the job (relq 'leased'). */
  active: { jobId: string; attempt: number };
  /**
   * The job completed (relq 'completed'); `returnvalue` is what its handler returned, undefined
   * when its JSON is over 16 KiB or its settle call's results passed 256 KiB
   * (`event.resultOmitted`: read it with `queue.getJob(jobId)`).
   */
  completed: { jobId: string; returnvalue: unknown };
  /** The job failed for good: dead-lettered (relq 'dead'). Failed attempts that retry are 'retried'. */
  failed: { jobId: string; failedReason: string };
  /** Attempts ran out (relq 'dead' after a failed attempt); `attemptsMade` counts them. */
  'retries-exhausted': { jobId: string; attemptsMade: number };
  /** A failed attempt, retried after `delayMs` (relq 'retried' of a failure; BullMQ has no such event). */
  retried: { jobId: string; attempt: number; delayMs: number };
  /** Its handler reported progress (relq 'progress'). */
  progress: { jobId: string; data: JobProgress };
  /** A sweep found its lease expired and counted a failed attempt (relq 'stalled'). */
  stalled: { jobId: string };
  /** The job was added (relq 'added'; delayed adds too); `name`: its name ('' for none). */
  added: { jobId: string; name: string };
  /**
   * The job is waiting to be leased: added without a delay (relq 'added'), due after a delay
   * ('promoted'), or retried without a delay.
   */
  waiting: { jobId: string };
  /**
   * The job waits until `delay` (epoch ms, Redis time): added with a delay, retried after one,
   * its due time changed (`changeDelay`), or moved there by its handler (relq 'delayed').
   */
  delayed: { jobId: string; delay: number };
  /** A flow's parent waits for its children (relq 'waiting-children'). */
  'waiting-children': { jobId: string };
  /** The job was removed (relq 'removed'). */
  removed: { jobId: string };
  /** `queue.cancel(id)` of the job (relq 'cancelled'; BullMQ has no such event): its 'removed', 'retried' or 'failed' follows. */
  cancelled: { jobId: string; reason?: string };
  /** The queue was paused (relq 'paused'). */
  paused: Record<string, never>;
  /** The queue was resumed (relq 'resumed'). */
  resumed: Record<string, never>;
  /**
   * An add carried a deduplication id that job `jobId` holds and made no job of its own
   * (relq 'deduplicated'; `event.outcome`: ignored, replaced or deferred).
   */
  deduplicated: { jobId: string; deduplicationId: string };
  /** A worker leased the last pending jobs (relq 'drained'). */
  drained: Record<string, never>;
  /** `queue.clean(state)` removed `count` jobs (relq 'cleaned'; BullMQ's `count` is a string). */
  cleaned: { count: number; state: CleanState };
}

export type QueueListenerEventType = keyof QueueListenerEvents;

type Mapper = (ev: QueueEvent) => object | undefined;

const jobIdOf = (ev: QueueEvent) => ({ jobId: ev.id ?? '' });

/** Per listener event: its first argument made from a relq event, or undefined when the event is another one. */
const MAPPERS: { [T in QueueListenerEventType]: (ev: QueueEvent) => QueueListenerEvents[T] | undefined } = {
  active: (ev) => (ev.type === 'leased' ? { jobId: ev.id ?? '', attempt: ev.attempt ?? 1 } : undefined),
  completed: (ev) => (ev.type === 'completed' ? { jobId: ev.id ?? '', returnvalue: ev.result } : undefined),
  failed: (ev) => (ev.type === 'dead' ? { jobId: ev.id ?? '', failedReason: ev.error ?? '' } : undefined),
  'retries-exhausted': (ev) => (ev.type === 'dead' && ev.attempt !== undefined ? { jobId: ev.id ?? '', attemptsMade: ev.attempt } : undefined),
  retried: (ev) =>
    ev.type === 'retried' && ev.attempt !== undefined ? { jobId: ev.id ?? '', attempt: ev.attempt, delayMs: ev.delayMs ?? 0 } : undefined,
  progress: (ev) => (ev.type === 'progress' ? { jobId: ev.id ?? '', data: ev.progress ?? 0 } : undefined),
  stalled: (ev) => (ev.type === 'stalled' ? jobIdOf(ev) : undefined),
  added: (ev) => (ev.type === 'added' ? { jobId: ev.id ?? '', name: ev.name ?? '' } : undefined),
  waiting: (ev) =>
    (ev.type === 'added' && ev.runAt === undefined) || ev.type === 'promoted' || (ev.type === 'retried' && !ev.delayMs) ? jobIdOf(ev) : undefined,
  delayed: (ev) =>
    (ev.type === 'added' || ev.type === 'retried' || ev.type === 'delayed') && ev.runAt !== undefined ? { jobId: ev.id ?? '', delay: ev.runAt } : undefined,
  'waiting-children': (ev) => (ev.type === 'waiting-children' ? jobIdOf(ev) : undefined),
  removed: (ev) => (ev.type === 'removed' ? jobIdOf(ev) : undefined),
  cancelled: (ev) => (ev.type === 'cancelled' ? { jobId: ev.id ?? '', ...(ev.reason === undefined ? {} : { reason: ev.reason }) } : undefined),
  paused: (ev) => (ev.type === 'paused' ? {} : undefined),
  resumed: (ev) => (ev.type === 'resumed' ? {} : undefined),
  deduplicated: (ev) => (ev.type === 'deduplicated' ? { jobId: ev.id ?? '', deduplicationId: ev.deduplicationId ?? '' } : undefined),
  drained: (ev) => (ev.type === 'drained' ? {} : undefined),
  cleaned: (ev) => (ev.type === 'cleaned' ? { count: ev.count ?? 0, state: ev.state ?? 'completed' } : undefined),
};

/** Every listener event type, for the explorer's check of `@OnQueueEvent()`. */
export const QUEUE_LISTENER_EVENT_TYPES = Object.keys(MAPPERS) as QueueListenerEventType[];

/** The first argument of a `type` listener for `ev`; undefined when `ev` is not that event. */
export function listenerArgument(type: QueueListenerEventType, ev: QueueEvent): object | undefined {
  return (MAPPERS[type] as Mapper)(ev);
}
