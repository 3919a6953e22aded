import { MAX_TIMER_MS } from '../defaults.js';

/**
 * The lanes of a worker that have nothing to do. One at a time waits on Redis (the worker
 * has one blocking connection); the others queue behind it and move only when released, so
 * a wake-up costs one lease call instead of one per lane.
 */
export class IdleLanes {
  private waiting = false;
  private readonly queued: Array<(next: 'lease' | 'wait') => void> = [];

  /**
   * Runs `wait` when no other lane waits on Redis and returns its result. Otherwise queues
   * until released: `releaseAll()` returns `released` (the lane leases), `handOver()` makes
   * this lane the one that waits. A queued lane whose last lease call saw a delayed job due in
   * `dueInMs` also leases then: the lane waiting on Redis may have looked before that job was
   * delayed, and the wake-up that announced it may have gone to this lane, or been dropped by
   * its lease call that found nothing to lease.
   */
  async turn<T>(wait: () => Promise<T>, released: T, dueInMs?: number): Promise<T> {
    const dueAt = dueInMs === undefined ? undefined : Date.now() + dueInMs;
    for (;;) {
      if (!this.waiting) {
        this.waiting = true;
        try {
          return await wait();
        } finally {
          this.waiting = false;
        }
      }
      if ((await this.queue(dueAt)) === 'lease') return released;
    }
  }

  /** Every queued lane leases (more work may be waiting, or the worker stops). */
  releaseAll(): void {
    if (this.queued.length === 0) return; // the busy path calls this after every lease
    for (const resolve of this.queued.splice(0)) resolve('lease');
  }

  /** The first queued lane takes over the wait on Redis. */
  handOver(): void {
    this.queued.shift()?.('wait');
  }

  /** Queues a lane until it is released, handed the wait, or `dueAt` comes (it leases). */
  private queue(dueAt: number | undefined): Promise<'lease' | 'wait'> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const next = (n: 'lease' | 'wait') => {
        clearTimeout(timer);
        resolve(n);
      };
      this.queued.push(next);
      if (dueAt === undefined) return;
      timer = setTimeout(() => {
        const i = this.queued.indexOf(next);
        if (i >= 0) this.queued.splice(i, 1);
        resolve('lease');
      }, Math.min(Math.max(0, dueAt - Date.now()), MAX_TIMER_MS));
    });
  }
}
