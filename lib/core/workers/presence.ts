import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { WORKER_NOTE_EVERY_MS } from '../defaults.js';

/** What a worker tells of itself now: jobs (or batches) at once, and running. */
export type PresenceCounts = () => { concurrency: number; running: number };

/**
 * A worker's registration as a live worker of its queue (workers/workers.lua): carried by
 * its lease calls and heartbeats when the last one is older than a few seconds, never a call
 * of its own while it leases or waits. Its entry lives `ttlMs` past its last registration. An
 * idle worker waits at most a fifth of that at a time and leases again (registering) once half
 * of it passed, so by 7/10 of it; the heartbeat (ticking at least every eighth) registers a
 * worker that made no call for 3/4 of it (paused, or running long jobs without a touch due):
 * listed all along.
 */
export class Presence {
  readonly id = randomBytes(9).toString('base64url');
  /** Client time of the last call that carried a registration; 0 before the first. */
  private sentAt = 0;
  private left = false;
  private readonly every: number;
  private readonly prefix: string;

  constructor(
    readonly ttlMs: number,
    private readonly counts: PresenceCounts,
    appName: string | undefined,
  ) {
    this.every = Math.min(WORKER_NOTE_EVERY_MS, Math.floor(ttlMs / 5));
    const fixed: Record<string, string | number> = { h: hostname(), p: process.pid };
    if (appName !== undefined) fixed['a'] = appName;
    this.prefix = `${ttlMs} ${this.id} ${JSON.stringify(fixed).slice(0, -1)}`;
  }

  /** The registration argument of a call sent now: '' unless the last one is older than its interval. */
  due(): string {
    return Date.now() - this.sentAt >= this.every ? this.take() : '';
  }

  /** The registration for a heartbeat without leases to touch: '' unless no call registered for 3/4 of the ttl. */
  stale(): string {
    return Date.now() - this.sentAt >= (this.ttlMs * 3) / 4 ? this.take() : '';
  }

  /** An idle wait ends (and the worker leases) once half the ttl passed without a registration. */
  idleDue(): boolean {
    return Date.now() - this.sentAt >= this.ttlMs / 2;
  }

  /** Longest single idle wait: a fifth of the ttl. */
  get maxWaitMs(): number {
    return Math.floor(this.ttlMs / 5);
  }

  /** Longest heartbeat period: an eighth of the ttl. */
  get maxBeatMs(): number {
    return Math.floor(this.ttlMs / 8);
  }

  /** The argument that removes the entry of a worker that closes ('' when it never registered); none registers after it. */
  leave(): string {
    if (this.left || this.sentAt === 0) return '';
    this.left = true;
    return `-${this.id}`;
  }

  private take(): string {
    if (this.left) return '';
    this.sentAt = Date.now();
    const { concurrency, running } = this.counts();
    return `${this.prefix},"c":${concurrency},"r":${running}}`;
  }
}
