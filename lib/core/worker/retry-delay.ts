/** Pauses after errors: the lease loops' and the event subscription's. */

const MAX_ERROR_BACKOFF_MS = 5000;

/** The pause after consecutive failed calls: 100 ms, doubling up to 5 s; a success resets it. */
export class ErrorBackoff {
  private last = 0;

  next(): number {
    this.last = Math.min(MAX_ERROR_BACKOFF_MS, this.last ? this.last * 2 : 100);
    return this.last;
  }

  reset(): void {
    this.last = 0;
  }
}

/** Waits `ms`, or until the waker handed to `keepWaker` is called. */
export function wakeableDelay(ms: number, keepWaker: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    keepWaker(() => {
      clearTimeout(t);
      resolve();
    });
  });
}
