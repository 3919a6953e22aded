import { Observable, Subject, share } from 'rxjs';
import { duplicateClient, type ClientHandle, type RedisClient } from '../redis/connection.js';
import { ClosedError } from '../errors.js';
import { ErrorBackoff, wakeableDelay } from '../worker/retry-delay.js';
import type { QueueEvent } from './types.js';
import type { JobProgress } from '../management/read-types.js';

/** How long a listener's announcement lasts, and how often it is renewed. */
const LISTEN_TTL_MS = 30_000;
const LISTEN_RENEW_MS = 10_000;

/**
 * One sharded pub/sub subscription per queue object, opened on the first subscriber
 * and closed after the last. Scripts publish each call's transitions as one JSON array,
 * but only while the listeners key exists: the hub sets it (with an expiry, renewed)
 * before it reports the subscription ready, so no script after that skips publishing.
 *
 * The stream never errors: a subscription that cannot be made (Redis away, a failover) is
 * tried again with a growing pause (100 ms to 5 s), and one that drops is resubscribed by the
 * client; the first failure of an outage is reported through `warn`. It completes only when
 * the queue object is closed.
 */
export class EventHub {
  private sub: RedisClient | undefined;
  private ready: Promise<void> | undefined;
  private renew: NodeJS.Timeout | undefined;
  private announced = false;
  private closed = false;
  /** Bumped when the subscription is dropped: an attempt of an older generation gives up. */
  private generation = 0;
  private wakeRetry: (() => void) | undefined;
  private readonly subject = new Subject<QueueEvent>();
  private readonly reconnects = new Subject<void>();
  readonly events$: Observable<QueueEvent>;
  /**
   * Fires when the subscription is back after a reconnect: transitions published while
   * it was down were missed, so watchers read the state again.
   */
  readonly resubscribed$ = this.reconnects.asObservable();

  constructor(
    private readonly handle: ClientHandle,
    private readonly channel: string,
    private readonly listenersKey: string,
    private readonly queue: string,
    private readonly wrapError: (err: unknown) => Error,
    private readonly warn: (message: string) => void,
  ) {
    this.events$ = new Observable<QueueEvent>((subscriber) => {
      const s = this.subject.subscribe(subscriber);
      void this.open().catch(() => undefined); // retried inside; only a closed queue ends it
      return () => s.unsubscribe();
    }).pipe(share({ resetOnRefCountZero: () => this.closeSubscription() }));
  }

  /**
   * Resolves once the subscription is active, so no later transition is missed; tries until
   * it is (rejects only when the queue object is closed).
   */
  open(): Promise<void> {
    this.ready ??= this.subscribeUntilDone(this.generation);
    return this.ready;
  }

  private async subscribeUntilDone(generation: number): Promise<void> {
    const errors = new ErrorBackoff();
    let failures = 0;
    for (;;) {
      if (this.closed || generation !== this.generation) throw new ClosedError(`event stream of queue '${this.queue}'`);
      try {
        await this.subscribeOnce(generation);
        if (failures > 0) this.warn(`queue '${this.queue}': event stream subscribed again after ${failures} failed attempt(s)`);
        return;
      } catch (err) {
        // unsubscribed or closed meanwhile: nothing to retry (and no timer left behind)
        if (this.closed || generation !== this.generation) throw new ClosedError(`event stream of queue '${this.queue}'`);
        failures += 1;
        if (failures === 1) {
          this.warn(`queue '${this.queue}': event stream cannot subscribe (${this.wrapError(err).message}); retrying until it can`);
        }
        await wakeableDelay(errors.next(), (wake) => (this.wakeRetry = wake));
        this.wakeRetry = undefined;
      }
    }
  }

  private async subscribeOnce(generation: number): Promise<void> {
    const sub = duplicateClient(this.handle, 'subscriber');
    this.sub = sub;
    sub.on('smessage', (_channel: string, message: string) => this.dispatch(message));
    let connected = false;
    sub.on('ready', () => {
      if (connected && this.sub === sub) {
        void this.announce().catch(() => undefined); // the key may be gone with a restarted server
        this.reconnects.next();
      }
      connected = true;
    });
    try {
      await sub.ssubscribe(this.channel);
      await this.announce();
    } catch (err) {
      // neither subscribed nor announced: dropped, and tried again by the caller
      if (this.sub === sub) {
        this.sub = undefined;
        sub.disconnect();
      } // else closeSubscription() already disconnected it: twice leaves ioredis a timer running
      throw err;
    }
    if (this.sub !== sub || generation !== this.generation) return;
    this.announced = true;
    this.renew = setInterval(() => void this.announce().catch(() => undefined), LISTEN_RENEW_MS);
    this.renew.unref();
  }

  /** True while this hub is subscribed and has announced itself. */
  get listening(): boolean {
    return this.announced;
  }

  private announce(): Promise<unknown> {
    return this.handle.client.set(this.listenersKey, '1', 'PX', LISTEN_TTL_MS);
  }

  private dispatch(message: string): void {
    let batch: unknown;
    try {
      batch = JSON.parse(message);
    } catch {
      return;
    }
    if (!Array.isArray(batch)) return;
    for (const ev of batch as Array<Omit<QueueEvent, 'queue'>>) {
      // progress and results travel as their JSON text (progress/update-progress.lua, settles/settle-items.lua)
      if (ev.type === 'progress' && typeof ev.progress === 'string') ev.progress = JSON.parse(ev.progress) as JobProgress;
      if (ev.type === 'completed' && typeof ev.result === 'string') ev.result = JSON.parse(ev.result) as unknown;
      this.subject.next({ ...ev, queue: this.queue });
    }
  }

  private async closeSubscription(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    this.ready = undefined;
    this.announced = false;
    this.generation += 1;
    this.wakeRetry?.();
    clearInterval(this.renew);
    // The key is left to expire: other processes may still be listening.
    sub?.disconnect();
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
    void this.closeSubscription();
    this.subject.complete();
  }
}
