import { Cluster } from 'ioredis';
import { MAX_TIMER_MS } from '../defaults.js';
import type { RedisClient } from './connection.js';

/** Margin after a blocking pop's own timeout before its socket is presumed dead. */
const WATCHDOG_MS = 3000;

/** What a blocking pop ended with. */
export interface PopResult {
  /** The popped value; null when the wait timed out or was cut off. */
  value: string | null;
  /**
   * The wait was cut off: its connection closed under it (a value popped just before may
   * have been lost with the reply), or no reply came within the wait plus a margin
   * (half-open socket, then dropped here). Whoever waits for a wake-up must look again.
   */
  cut: boolean;
}

/**
 * BLPOP on `key` for up to `ms`. The wait ends early when its connection closes: blocking
 * connections do not resend an unanswered command after a reconnect (connection.ts), so an
 * old BLPOP can never take a value nobody reads. A reply that never comes is cut off and the
 * connection dropped (ioredis reconnects it), so no wait hangs for good.
 */
export async function blockingPop(blocker: RedisClient, key: string, ms: number): Promise<PopResult> {
  const seconds = Math.max(0.01, ms / 1000).toFixed(3);
  let timer: NodeJS.Timeout | undefined;
  let onClose: (() => void) | undefined;
  // Only a BLPOP already written can be lost with its connection; one still queued offline
  // is sent once the connection is up, so the close that matters is one after 'ready'.
  const arm = () => blocker.once('close', onClose!);
  const cutOff = new Promise<'stuck' | 'closed'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), Math.min(ms + WATCHDOG_MS, MAX_TIMER_MS));
    onClose = () => resolve('closed');
  });
  if (blocker.status === 'ready') arm();
  else blocker.once('ready', arm);
  // A Cluster's node connections close without a 'close' of their own: a node leaving the
  // slot map (a failed-over master) may have taken the BLPOP with it.
  if (blocker instanceof Cluster) blocker.once('-node', onClose!);
  try {
    const res = await Promise.race([blocker.blpop(key, seconds), cutOff]);
    if (res === 'stuck') blocker.disconnect(true);
    if (res === 'stuck' || res === 'closed') return { value: null, cut: true };
    return { value: res ? res[1] : null, cut: false };
  } finally {
    clearTimeout(timer);
    blocker.off('ready', arm);
    blocker.off('close', onClose!);
    if (blocker instanceof Cluster) blocker.off('-node', onClose!);
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
