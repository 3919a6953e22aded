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
   * this lane the one that waits.
   */
  async turn<T>(wait: () => Promise<T>, released: T): Promise<T> {
    for (;;) {
      if (!this.waiting) {
        this.waiting = true;
        try {
          return await wait();
        } finally {
          this.waiting = false;
        }
      }
      const next = await new Promise<'lease' | 'wait'>((resolve) => this.queued.push(resolve));
      if (next === 'lease') return released;
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
}
