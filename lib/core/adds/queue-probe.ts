import type { RedisClient } from '../redis/connection.js';

/** A reading older than this no longer lets adds take the plain path. */
const MAX_AGE_MS = 1000;
/** A producer that keeps adding reads again after this, so its reading does not go stale. */
const REFRESH_MS = 500;
/** Fields of the queue's meta hash a plain add would ignore (docs/bounded-fair-batch.md). */
const ENFORCED = ['closed', 'del', 'bound', 'stats'] as const;

/**
 * What a producer last read of its queue's shared state: whether any process listens to
 * its events, and whether the queue is closed, deleted (tombstone), bounded or counting
 * stats. Plain adds (add.lua: three Redis commands) read none of that, so a producer
 * takes that path only while a reading under a second old found nothing to enforce;
 * otherwise its adds go through produce.lua, which checks all of it in the same script.
 * Publishing 'added' events follows the listeners reading (the scripts check it again
 * when publishing anything else). One reading is two commands, sent at most every half
 * second, and only while the producer adds.
 */
export class QueueProbe {
  private listeners: boolean | undefined;
  private plain = false;
  /** When the request behind the current reading was sent. */
  private readAt = -Infinity;
  private sentAt = -Infinity;
  private reading = false;

  constructor(
    private readonly client: RedisClient,
    private readonly listenersKey: string,
    private readonly metaKey: string,
    /** This process's own listener, known without asking Redis. */
    private readonly localListener: () => boolean,
  ) {}

  /** True when adds may take the plain path at `now` (Date.now()); starts a new reading when due. */
  plainAdds(now: number): boolean {
    if (now - this.sentAt > REFRESH_MS && !this.reading) this.read(now);
    return this.plain && now - this.readAt <= MAX_AGE_MS;
  }

  /** True unless the last reading found nobody listening. */
  listening(): boolean {
    return this.localListener() || (this.listeners ?? true);
  }

  private read(sentAt: number): void {
    this.reading = true;
    this.sentAt = sentAt;
    Promise.all([this.client.exists(this.listenersKey), this.client.hmget(this.metaKey, ...ENFORCED)]).then(
      ([listeners, enforced]) => {
        this.listeners = listeners > 0;
        this.plain = enforced.every((v) => v === null);
        this.readAt = sentAt;
        this.reading = false;
      },
      () => {
        // unknown: publish and go through produce.lua, which check for themselves
        this.listeners = undefined;
        this.plain = false;
        this.reading = false;
      },
    );
  }
}
