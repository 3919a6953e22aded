/**
 * How long a worker call waits for one partition before it goes on without it: a master that
 * died keeps its calls hanging until the client gives up on it (about a second of
 * redirections), and the other partitions must not wait that long (docs/scale-out.md,
 * "Failures"). At least LATE_MIN_MS, and 8 times the recent mean answer time, so that a
 * machine that is slow all over does not take every partition for away.
 */
const LATE_MIN_MS = 500;
const LATE_TIMES_MEAN = 8;

export const LATE = Symbol('late');

export class CallClock {
  private mean = 2;

  /** The wait for the next call's answer. */
  get waitMs(): number {
    return Math.max(LATE_MIN_MS, LATE_TIMES_MEAN * this.mean);
  }

  /** An answer came after `ms`. */
  took(ms: number): void {
    this.mean += (ms - this.mean) / 16;
  }

  /**
   * The call's answer, or LATE once `waitMs` passed and the event loop has had a turn to read
   * replies (a loop busy with handlers does not make a partition late: its reply is read in
   * the poll phase, before the check). The call goes on; `late` gets its outcome.
   */
  within<T>(call: Promise<T>, late: (outcome: { value: T } | { error: unknown }) => void): Promise<T | typeof LATE> {
    const started = Date.now();
    return new Promise<T | typeof LATE>((resolve, reject) => {
      let decided = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (decided) return;
            decided = true;
            resolve(LATE);
          }),
        this.waitMs,
      );
      call.then(
        (value) => {
          this.took(Date.now() - started);
          if (!decided) {
            decided = true;
            clearTimeout(timer);
            resolve(value);
          } else late({ value });
        },
        (error: unknown) => {
          if (!decided) {
            decided = true;
            clearTimeout(timer);
            reject(error);
          } else late({ error });
        },
      );
    });
  }
}
