import { Cluster } from 'ioredis';
import { ClosedError } from '../errors.js';
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
   * have been lost with the reply), no reply came within the wait plus a margin (half-open
   * socket), or the Blocker was closed. Whoever waits for a wake-up must look again.
   */
  cut: boolean;
}

/**
 * One dedicated connection for blocking pops (a blocked connection serves nobody else), one
 * wait at a time, opened on the first wait.
 *
 * A wait that is cut off drops its connection for good, and the next wait opens a new one.
 * The BLPOP given up on must never run later: ioredis sends a command again after a reconnect,
 * and a Cluster client holds one whose node went away and sends it once the slots settle. On
 * the same connection as the next wait, it would take a wake-up token that nobody reads and
 * hold the next BLPOP behind it on the socket, so an idle worker slept through the adds
 * that followed. Dropping the connection rejects whatever it still holds.
 */
export class Blocker {
  private client: RedisClient | undefined;
  /** Ends the wait in progress as cut off (close()). */
  private cutShort: (() => void) | undefined;
  private closed = false;

  constructor(private readonly connect: () => RedisClient) {}

  /** BLPOP on `key` for up to `ms`. ClosedError once the Blocker is closed. */
  async pop(key: string, ms: number): Promise<PopResult> {
    if (this.closed) throw new ClosedError('blocking connection');
    // A connection that ended (a client whose retry strategy gave up) is not used again.
    if (this.client?.status === 'end') this.drop(this.client);
    this.client ??= this.connect();
    const client = this.client;
    const result = await this.waitOn(client, key, ms);
    if (result.cut) this.drop(client);
    return result;
  }

  /**
   * Ends the wait in progress at once, cut off (its connection is dropped: the next wait opens
   * a new one). Nothing happens without a wait in progress.
   */
  interrupt(): void {
    this.cutShort?.();
  }

  /** Closes the connection; a wait in progress ends at once, cut off. Idempotent. */
  close(): void {
    this.closed = true;
    this.cutShort?.();
    if (this.client) this.drop(this.client);
  }

  private drop(client: RedisClient): void {
    // Once only: a second disconnect() would leave ioredis' disconnect timer running.
    if (this.client !== client) return;
    this.client = undefined;
    client.disconnect();
  }

  private async waitOn(client: RedisClient, key: string, ms: number): Promise<PopResult> {
    const seconds = Math.max(0.01, ms / 1000).toFixed(3);
    let timer: NodeJS.Timeout | undefined;
    let onClose: (() => void) | undefined;
    const cutOff = new Promise<'stuck' | 'closed'>((resolve) => {
      timer = setTimeout(() => resolve('stuck'), Math.min(ms + WATCHDOG_MS, MAX_TIMER_MS));
      onClose = () => resolve('closed');
    });
    this.cutShort = onClose;
    // Only a BLPOP already written can be lost with its connection; one still queued offline
    // is sent once the connection is up, so the close that matters is one after 'ready'. A
    // Cluster's node connections close without a 'close' of their own: a node leaving the
    // slot map (a failed-over master) may have taken the BLPOP with it. Before 'ready', a new
    // Cluster client drops the nodes that serve no slot, with nothing sent to them.
    const arm = () => {
      client.once('close', onClose!);
      if (client instanceof Cluster) client.once('-node', onClose!);
    };
    if (client.status === 'ready') arm();
    else client.once('ready', arm);
    try {
      const res = await Promise.race([client.blpop(key, seconds), cutOff]);
      if (res === 'stuck' || res === 'closed') return { value: null, cut: true };
      return { value: res ? res[1] : null, cut: false };
    } finally {
      clearTimeout(timer);
      this.cutShort = undefined;
      client.off('ready', arm);
      client.off('close', onClose!);
      if (client instanceof Cluster) client.off('-node', onClose!);
    }
  }
}

/**
 * The Blockers of one Queue object: opened on demand, kept for reuse, all closed with the
 * Queue.
 */
export class BlockerPool {
  private readonly idle: Blocker[] = [];
  private readonly all = new Set<Blocker>();

  constructor(private readonly connect: () => RedisClient) {}

  /** A Blocker of its own (a worker's, a waiting producer's), closed with close(). */
  open(): Blocker {
    const b = new Blocker(this.connect);
    this.all.add(b);
    return b;
  }

  close(b: Blocker): void {
    this.all.delete(b);
    b.close();
  }

  /** A Blocker for one wait, given back with `give`. */
  take(): Blocker {
    return this.idle.pop() ?? this.open();
  }

  give(b: Blocker, closing: boolean): void {
    if (closing) this.close(b);
    else this.idle.push(b);
  }

  closeAll(): void {
    for (const b of [...this.all]) this.close(b);
    this.idle.length = 0;
  }
}
