import { Observable, Subject, share } from 'rxjs';
import { duplicateClient, type RedisClient } from './connection.js';
import type { QueueEvent } from './types.js';

/**
 * One sharded pub/sub subscription per queue object, opened on the first subscriber
 * and closed after the last. Scripts publish each call's transitions as one JSON array.
 */
export class EventHub {
  private sub: RedisClient | undefined;
  private ready: Promise<void> | undefined;
  private readonly subject = new Subject<QueueEvent>();
  private readonly reconnects = new Subject<void>();
  readonly events$: Observable<QueueEvent>;
  /**
   * Fires when the subscription is back after a reconnect: transitions published while
   * it was down were missed, so watchers read the state again.
   */
  readonly resubscribed$ = this.reconnects.asObservable();

  constructor(
    private readonly client: RedisClient,
    private readonly channel: string,
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
      const sub = duplicateClient(this.client, 'subscriber');
      this.sub = sub;
      sub.on('smessage', (_channel: string, message: string) => this.dispatch(message));
      let connected = false;
      sub.on('ready', () => {
        if (connected && this.sub === sub) this.reconnects.next();
        connected = true;
      });
      this.ready = sub.ssubscribe(this.channel).then(
        () => undefined,
        (err: unknown) => {
          if (this.sub === sub) {
            this.sub = undefined;
            this.ready = undefined;
          }
          sub.disconnect();
          throw this.wrapError(err);
        },
      );
    }
    return this.ready;
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
    sub?.disconnect();
    return Promise.resolve();
  }

  close(): void {
    void this.closeSubscription();
    this.subject.complete();
  }
}
