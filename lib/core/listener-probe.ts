import type { RedisClient } from './connection.js';

/** How old a reading of the listeners key may be before a plain add reads it again. */
const MAX_AGE_MS = 1000;

/**
 * Whether any process listens to a queue's events, as a producer last read it. A plain
 * add asks its script to publish only when this says so, which keeps an add at three
 * Redis commands when nobody listens. Every other script checks the key itself, so
 * only 'added' events can be missed, for at most about a second after a listener starts.
 */
export class ListenerProbe {
  private known: boolean | undefined;
  private readAt = -Infinity;
  private reading = false;

  constructor(
    private readonly client: RedisClient,
    private readonly key: string,
    /** This process's own listener, known without asking Redis. */
    private readonly localListener: () => boolean,
  ) {}

  /** True unless a recent reading found nobody listening; starts a new reading when stale. */
  listening(): boolean {
    if (this.localListener()) return true;
    const now = Date.now();
    if (now - this.readAt > MAX_AGE_MS && !this.reading) {
      this.reading = true;
      this.readAt = now;
      this.client.exists(this.key).then(
        (n) => {
          this.known = n > 0;
          this.reading = false;
        },
        () => {
          this.known = undefined; // unknown: publish, the script checks again
          this.reading = false;
        },
      );
    }
    return this.known ?? true;
  }
}
