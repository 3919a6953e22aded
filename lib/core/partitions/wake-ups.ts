import type { Subscription } from 'rxjs';
import type { EventHub, HubChannel } from '../events/event-hub.js';
import type { WorkWait } from '../queue/internals.js';
import type { Turns } from './turns.js';

/** What a wake-up channel's message stands for: a partition that may have work, or MAP_CHANGED. */
export const MAP_CHANGED = -1;

/**
 * The wake-up channels of a partitioned queue's partitions, `<tag>:wakes`, on which their
 * scripts publish where a plain queue pushes a token to its wake-up list (leases/wake.lua): a
 * message names its partition by its channel; 'map' says a resize changed the queue's map
 * (fence-partition.lua). One subscription for all of them: on a Cluster one connection per
 * master, not per partition (redis/connection.ts duplicateClient). `tags` is read at each
 * subscription: a resize adds partitions (EventHub.resubscribe).
 */
export function partitionWakes(tags: () => readonly string[]): HubChannel<number> {
  let indexed: readonly string[] | undefined;
  let index = new Map<string, number>();
  const indexOf = () => {
    const now = tags();
    if (now !== indexed || index.size !== now.length) {
      indexed = now;
      index = new Map(now.map((tag, i) => [`${tag}:wakes`, i]));
    }
    return index;
  };
  return {
    get channels() {
      return [...indexOf().keys()];
    },
    what: 'wake-ups',
    decode: (message, channel) => {
      if (message === 'map') return [MAP_CHANGED];
      const i = indexOf().get(channel);
      return i === undefined ? [] : [i];
    },
  };
}

/** One worker's wait: interrupt() ends it as woken. */
class LaneWait implements WorkWait {
  end: ((woken: boolean) => void) | undefined;

  interrupt(): void {
    this.end?.(true);
  }
}

/**
 * The waits of the workers of one partitioned queue object. A wake-up marks its partition in
 * the turns and ends every wait; so does a resubscription (wake-ups may have been lost while
 * the connection was down), and the subscription's first readiness (one may have come before
 * it). Subscribed while some worker is open.
 */
export class PartitionWaits {
  private readonly waits = new Set<LaneWait>();
  private subscription: Subscription | undefined;
  private resubscribed: Subscription | undefined;
  private ready = false;

  constructor(
    private readonly hub: EventHub<number>,
    private readonly turns: Turns,
    /** A resize may have changed the queue's map: read it again (PartitionedQueue). */
    private readonly mapChanged: () => void,
  ) {}

  open(): WorkWait {
    const wait = new LaneWait();
    this.waits.add(wait);
    if (!this.subscription) {
      this.subscription = this.hub.events$.subscribe((i) => {
        if (i === MAP_CHANGED) return this.mapChanged();
        this.turns.mark(i);
        this.wakeAll();
      });
      this.resubscribed = this.hub.resubscribed$.subscribe(() => {
        this.mapChanged(); // a notice may have been missed too
        this.turns.markAll();
        this.wakeAll();
      });
    }
    return wait;
  }

  close(wait: WorkWait): void {
    wait.interrupt();
    this.waits.delete(wait as LaneWait);
    if (this.waits.size > 0 || !this.subscription) return;
    this.subscription.unsubscribe();
    this.resubscribed?.unsubscribe();
    this.subscription = this.resubscribed = undefined;
    this.ready = false;
  }

  /** Waits up to `ms` for work: true when woken (or at once when some partition may have work), false at the timeout. */
  wait(w: WorkWait, ms: number): Promise<boolean> {
    const wait = w as LaneWait;
    if (this.turns.anyWork()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => end(false), ms);
      const end = (woken: boolean) => {
        clearTimeout(timer);
        wait.end = undefined;
        resolve(woken);
      };
      wait.end = end;
      if (!this.ready) {
        // a wake-up published before the subscription was made is lost: look again once it is
        this.hub.open().then(
          () => {
            this.ready = true;
            this.turns.markAll();
            wait.end?.(true);
          },
          () => undefined, // closed: the worker closes too
        );
      }
    });
  }

  private wakeAll(): void {
    for (const w of this.waits) w.end?.(true);
  }
}
