/**
 * A FIFO counting semaphore: at most `limit` holders at once. A waiter whose signal
 * aborts leaves the line and rejects with the signal's reason.
 */
export class Semaphore {
  private held = 0;
  private readonly waiters: Array<(refused?: Error) => void> = [];

  constructor(private max: number) {}

  get limit(): number {
    return this.max;
  }

  /** Raised: waiters take the new slots now. Lowered: holders keep theirs; none passes on until below it. */
  set limit(n: number) {
    this.max = n;
    while (this.held < this.max && this.waiters.length) {
      this.held += 1;
      this.waiters.shift()!();
    }
  }

  get active(): number {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Waiters turned away: rejected with `reason` (also every acquire until reopen()). */
  private refusal: Error | undefined;

  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.refusal) throw this.refusal;
    if (this.held < this.max && this.waiters.length === 0) {
      this.held += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (refused?: Error) => {
        signal?.removeEventListener('abort', onAbort);
        if (refused) reject(refused);
        else resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  /** Rejects every waiter with `reason`, and every acquire from now on until reopen(). */
  refuse(reason: Error): void {
    this.refusal = reason;
    for (const grant of this.waiters.splice(0)) grant(reason);
  }

  reopen(): void {
    this.refusal = undefined;
  }

  release(): void {
    const next = this.held <= this.max ? this.waiters.shift() : undefined;
    if (next) next(); // the slot passes straight to the next waiter
    else this.held -= 1;
  }
}
