import type { Blocker } from '../redis/blocking-wait.js';
import type { RelqError } from '../errors.js';
import type { QueueKeys } from '../redis/keys.js';
import type { AddFlag, EventsFlag, QueueScript } from '../redis/script-def.js';

/** What the bounded / fair / lifecycle parts need from their Queue. */
export interface SettingsContext {
  readonly name: string;
  readonly keys: QueueKeys;
  readonly eventsFlag: '0' | '1';
  /** An add's flag: `events`, with a partition's map epoch after it (QueueContext.addFlag). */
  addFlag(events: EventsFlag): AddFlag;
  /** One operation on the queue (QueueContext.run). */
  run<Args, Result, Op extends string>(script: QueueScript<string, Args, Result, Op>, args: Args, op?: Op): Promise<Result>;
  /** A dedicated connection for blocking pops (closed by the Queue's close()). */
  openBlocker(): Blocker;
  closeBlocker(b: Blocker): void;
  /** `op`: the label of the failed call in the error (a script's op, or 'events'). */
  wrapError(err: unknown, op: string): RelqError;
  /** The Queue object was closed (connections going away). */
  readonly isClosed: boolean;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
