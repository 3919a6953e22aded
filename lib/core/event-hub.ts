import { Observable, Subject, share } from 'rxjs';
import { duplicateClient, type ClientHandle, type RedisClient } from './connection.js';
import type { QueueEvent } from './types.js';

/** How long a listener's announcement lasts, and how often it is renewed. */
const LISTEN_TTL_MS = 30_000;
const LISTEN_RENEW_MS = 10_000;

/**
 * One sharded pub/sub subscription per queue object, opened on the first subscriber
 * and closed after the last. Scripts publish each call's transitions as one JSON array,
 * but only while the listeners key exists: the hub sets it (with an expiry, renewed)
 * before it reports the subscription ready, so no script after that skips publishing.
 */
export class EventHub {
  private sub: RedisClient | undefined;
  private ready: Promise<void> | undefined;
  private renew: NodeJS.Timeout | undefined;
  private announced = false;
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
  ) {
    this.events$ = new Observable<QueueEvent>((subscriber) => {
      const s = this.subject.subscribe(subscriber);
      void this.open().catch((err: unknown) => subscriber.error(err));
      return () => s.unsubscribe();
    }).pipe(share({ resetOnRefCountZero: () => this.closeSubscription() }));
  }

  /** Resolves once the subscription is active, so no later transition is missed. */
  open(): Promise<void> {
    if (!this.ready) {
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
      this.ready = sub
        .ssubscribe(this.channel)
        .then(() => this.announce())
        .then(
          () => {
            if (this.sub !== sub) return;
            this.announced = true;
            this.renew = setInterval(() => void this.announce().catch(() => undefined), LISTEN_RENEW_MS);
            this.renew.unref();
          },
          (err: unknown) => {
            // neither subscribed nor announced: the next subscriber tries again
            if (this.sub === sub) {
              this.sub = undefined;
              this.ready = undefined;
              sub.disconnect();
            } // else closeSubscription() already disconnected it: twice leaves ioredis a 2 s timer
            throw this.wrapError(err);
          },
        );
    }
    return this.ready;
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
      this.subject.next({ ...ev, queue: this.queue });
    }
  }

  private async closeSubscription(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    this.ready = undefined;
    this.announced = false;
    clearInterval(this.renew);
    // The key is left to expire: other processes may still be listening.
    sub?.disconnect();
    return Promise.resolve();
  }

  close(): void {
    void this.closeSubscription();
    this.subject.complete();
  }
}
