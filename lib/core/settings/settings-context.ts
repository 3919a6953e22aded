import type { Blocker } from '../redis/blocking-wait.js';
import type { RelqError } from '../errors.js';
import type { QueueKeys } from '../redis/keys.js';
import type { ScriptName } from '../redis/script-code.js';

/** What the bounded / fair / lifecycle parts need from their Queue. */
export interface SettingsContext {
  readonly name: string;
  readonly keys: QueueKeys;
  readonly eventsFlag: '0' | '1';
  run(script: ScriptName, op: string, args: Array<string | number>): Promise<unknown>;
  /** A dedicated connection for blocking pops (closed by the Queue's close()). */
  openBlocker(): Blocker;
  closeBlocker(b: Blocker): void;
  wrapError(err: unknown, op: string): RelqError;
  /** The Queue object was closed (connections going away). */
  readonly isClosed: boolean;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
