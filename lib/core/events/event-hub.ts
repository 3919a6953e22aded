import { Observable, Subject, share } from 'rxjs';
import { duplicateClient, type ClientHandle, type RedisClient } from '../redis/connection.js';
import { ClosedError } from '../errors.js';
import { ErrorBackoff, wakeableDelay } from '../worker/retry-delay.js';
import type { QueueEvent } from './types.js';
import type { JobProgress } from '../management/read-types.js';

/** How long a listener's announcement lasts, and how often it is renewed. */
const LISTEN_TTL_MS = 30_000;
const LISTEN_RENEW_MS = 10_000;

/** What one hub subscribes to, and how its messages read. */
export interface HubChannel<T> {
  /** Its sharded channels: one, or several of different slots (a partitioned queue's wake-ups, lib/core/partitions/). */
  channels: readonly string[];
  /**
   * Set (with an expiry, renewed) while subscribed, for channels that scripts publish on only
   * while someone listens (the job events); none for channels they always publish on.
   */
  listenersKey?: string;
  /** What the stream is called in warnings ('event stream'). */
  what: string;
  /** One message's items; none for a message that is not the channel's. */
  decode(message: string, channel: string): T[];
}

/**
 * One sharded pub/sub subscription per queue object and channel, opened on the first
 * subscriber and closed after the last. Scripts publish each call's transitions as one JSON
 * array; on the job events' channel only while the listeners key exists: the hub sets it
 * (with an expiry, renewed) before it reports the subscription ready, so no script after
 * that skips publishing.
 *
 * The stream never errors: a subscription that cannot be made (Redis away, a failover) is
 * tried again with a growing pause (100 ms to 5 s), and one that drops is resubscribed by the
 * client; the first failure of an outage is reported through `warn`. It completes only when
 * the queue object is closed.
 */
export class EventHub<T = QueueEvent> {
  private sub: RedisClient | undefined;
  private ready: Promise<void> | undefined;
  private renew: NodeJS.Timeout | undefined;
  private announced = false;
  private closed = false;
  /** Bumped when the subscription is dropped: an attempt of an older generation gives up. */
  private generation = 0;
  private wakeRetry: (() => void) | undefined;
  private readonly subject = new Subject<T>();
  private readonly reconnects = new Subject<void>();
  readonly events$: Observable<T>;
  /**
   * Fires when the subscription is back after a reconnect: transitions published while
   * it was down were missed, so watchers read the state again.
   */
  readonly resubscribed$ = this.reconnects.asObservable();

  constructor(
    private readonly handle: ClientHandle,
    private readonly of: HubChannel<T>,
    private readonly queue: string,
    private readonly wrapError: (err: unknown) => Error,
    private readonly warn: (message: string) => void,
  ) {
    this.events$ = new Observable<T>((subscriber) => {
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
      if (this.closed || generation !== this.generation) throw new ClosedError(`${this.of.what} of queue '${this.queue}'`);
      try {
        await this.subscribeOnce(generation);
        if (failures > 0) this.warn(`queue '${this.queue}': ${this.of.what} subscribed again after ${failures} failed attempt(s)`);
        return;
      } catch (err) {
        // unsubscribed or closed meanwhile: nothing to retry (and no timer left behind)
        if (this.closed || generation !== this.generation) throw new ClosedError(`${this.of.what} of queue '${this.queue}'`);
        failures += 1;
        if (failures === 1) {
          this.warn(`queue '${this.queue}': ${this.of.what} cannot subscribe (${this.wrapError(err).message}); retrying until it can`);
        }
        await wakeableDelay(errors.next(), (wake) => (this.wakeRetry = wake));
        this.wakeRetry = undefined;
      }
    }
  }

  private async subscribeOnce(generation: number): Promise<void> {
    const sub = duplicateClient(this.handle, 'subscriber');
    this.sub = sub;
    sub.on('smessage', (channel: string, message: string) => this.dispatch(message, channel));
    let connected = false;
    sub.on('ready', () => {
      if (connected && this.sub === sub) {
        void this.announce().catch(() => undefined); // the key may be gone with a restarted server
        this.reconnects.next();
      }
      connected = true;
    });
    try {
      // one call per channel: a Cluster routes each by its slot, to its master's connection
      await Promise.all(this.of.channels.map((channel) => sub.ssubscribe(channel)));
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
    if (this.of.listenersKey === undefined) return;
    this.renew = setInterval(() => void this.announce().catch(() => undefined), LISTEN_RENEW_MS);
    this.renew.unref();
  }

  /** True while this hub is subscribed and has announced itself. */
  get listening(): boolean {
    return this.announced;
  }

  private async announce(): Promise<void> {
    if (this.of.listenersKey !== undefined) await this.handle.client.set(this.of.listenersKey, '1', 'PX', LISTEN_TTL_MS);
  }

  private dispatch(message: string, channel: string): void {
    for (const item of this.of.decode(message, channel)) this.subject.next(item);
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

  /**
   * The channels changed (a partitioned queue's partitions, after a resize): an open
   * subscription is made again on the new list, and `resubscribed$` fires once it is, since
   * messages may have been missed meanwhile.
   */
  resubscribe(): void {
    if (this.closed || this.ready === undefined) return;
    void this.closeSubscription();
    this.open().then(
      () => this.reconnects.next(),
      () => undefined, // closed meanwhile
    );
  }

  close(): void {
    this.closed = true;
    void this.closeSubscription();
    this.subject.complete();
  }
}

/** The JSON array a call published, [] for anything else. */
export function jsonArray(message: string): unknown[] {
  try {
    const batch: unknown = JSON.parse(message);
    return Array.isArray(batch) ? batch : [];
  } catch {
    return [];
  }
}

/** The job events' channel of queue `queue`: its transitions, for events() and watch(). */
export function jobEvents(channel: string, listenersKey: string, queue: string): HubChannel<QueueEvent> {
  return {
    channels: [channel],
    listenersKey,
    what: 'event stream',
    decode: (message) =>
      (jsonArray(message) as Array<Omit<QueueEvent, 'queue'>>).map((ev) => {
        // progress and results travel as their JSON text (progress/update-progress.lua, settles/settle-items.lua)
        if (ev.type === 'progress' && typeof ev.progress === 'string') ev.progress = JSON.parse(ev.progress) as JobProgress;
        if (ev.type === 'completed' && typeof ev.result === 'string') ev.result = JSON.parse(ev.result) as unknown;
        return { ...ev, queue };
      }),
  };
}
