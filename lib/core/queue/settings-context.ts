import type { RedisClient } from '../redis/connection.js';
import { MAX_TIMER_MS } from '../defaults.js';
import type { RelqError } from '../errors.js';
import type { QueueKeys } from '../redis/keys.js';
import type { ScriptName } from '../redis/scripts.js';

/** What the bounded / fair / lifecycle parts need from their Queue. @internal */
export interface ExtContext {
  readonly name: string;
  readonly keys: QueueKeys;
  readonly eventsFlag: '0' | '1';
  run(script: ScriptName, op: string, args: Array<string | number>): Promise<unknown>;
  /** A dedicated connection for blocking pops (closed by the Queue's close()). */
  openBlocker(): RedisClient;
  closeBlocker(b: RedisClient): void;
  wrapError(err: unknown, op: string): RelqError;
  /** The Queue object was closed (connections going away). */
  readonly isClosed: boolean;
}

// Margin after a blocking pop's own timeout before its socket is presumed dead.
const WATCHDOG_MS = 3000;

/**
 * BLPOP on `key` for up to `ms`: the popped value, null on timeout. A reply that never
 * comes (half-open socket) is cut off, the connection replaced, and null returned.
 */
export async function blockingPop(blocker: RedisClient, key: string, ms: number): Promise<string | null> {
  const seconds = Math.max(0.01, ms / 1000).toFixed(3);
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), Math.min(ms + WATCHDOG_MS, MAX_TIMER_MS));
  });
  try {
    const res = await Promise.race([blocker.blpop(key, seconds), watchdog]);
    if (res === 'stuck') {
      blocker.disconnect(true);
      return null;
    }
    return res ? res[1] : null;
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
