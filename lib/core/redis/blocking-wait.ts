import { MAX_TIMER_MS } from '../defaults.js';
import type { RedisClient } from './connection.js';

/** Margin after a blocking pop's own timeout before its socket is presumed dead. */
const WATCHDOG_MS = 3000;

/** What a blocking pop ended with. */
export interface PopResult {
  /** The popped value; null when the wait timed out or was cut off. */
  value: string | null;
  /** No reply came within the wait plus a margin (half-open socket): the connection was dropped. */
  stuck: boolean;
}

/**
 * BLPOP on `key` for up to `ms`. A reply that never comes (half-open socket) is cut off and
 * the connection disconnected (ioredis reconnects it), so no wait hangs for good.
 */
export async function blockingPop(blocker: RedisClient, key: string, ms: number): Promise<PopResult> {
  const seconds = Math.max(0.01, ms / 1000).toFixed(3);
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), Math.min(ms + WATCHDOG_MS, MAX_TIMER_MS));
  });
  try {
    const res = await Promise.race([blocker.blpop(key, seconds), watchdog]);
    if (res === 'stuck') {
      blocker.disconnect(true);
      return { value: null, stuck: true };
    }
    return { value: res ? res[1] : null, stuck: false };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The dedicated connections of one Queue object for blocking waits (a blocked connection
 * serves nobody else): opened on demand, kept for reuse, all closed with the Queue.
 */
export class BlockerPool {
  private readonly idle: RedisClient[] = [];
  private readonly all = new Set<RedisClient>();

  constructor(private readonly connect: () => RedisClient) {}

  /** A connection of its own (a worker's, a waiting producer's), closed with close(). */
  open(): RedisClient {
    const b = this.connect();
    this.all.add(b);
    return b;
  }

  close(b: RedisClient): void {
    // A second disconnect() would leave ioredis' disconnect timer running.
    if (!this.all.delete(b)) return;
    b.disconnect();
  }

  /** A connection for one wait, given back with `give`. */
  take(): RedisClient {
    return this.idle.pop() ?? this.open();
  }

  give(b: RedisClient, closing: boolean): void {
    if (closing || b.status === 'end') this.close(b);
    else this.idle.push(b);
  }

  closeAll(): void {
    for (const b of [...this.all]) this.close(b);
    this.idle.length = 0;
  }
}
