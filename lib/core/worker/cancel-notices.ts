import { jsonArray, type EventHub, type HubChannel } from '../events/event-hub.js';

/**
 * How a worker learns at once that `cancel(id)` ended one of its leases. The cancel's script
 * (lib/core/management/cancel-job.lua) publishes the leases it ended on the queue's own
 * sharded channel (`<tag>:cancels`), every time: cancels are rare, and a publish nobody
 * hears costs next to nothing. Workers listen to it through one subscription per Queue
 * object, shared by all its workers, opened when the first starts and closed when the last
 * stops (an EventHub, like `events()`'s). The job events' channel would not do: listening to it
 * makes every lease and settle publish its transitions. So the hot path (lease, settle) neither
 * publishes nor reads anything for cancels: a queue where nothing is ever cancelled pays one
 * idle subscriber connection per Queue object that runs workers, and nothing per job.
 *
 * A notice can be missed (cancelled before the subscription was active, or during a
 * reconnect): the script also remembers the ended lease's token for a while, so a touch of it
 * answers 'cancelled', not 'lost'. Workers touch their leases whenever the subscription
 * becomes active (again), and their heartbeat touches them anyway.
 */

/** A lease that cancel() ended: its job, its token, the cancel's reason. */
export interface CancelNotice {
  readonly id: string;
  readonly token: string;
  readonly reason?: string;
}

/** The cancel notices' channel of a queue (the derived key `cancels`), or of each partition of a partitioned queue. */
export function cancelNotices(channels: () => readonly string[]): HubChannel<CancelNotice> {
  return {
    get channels() {
      return channels(); // a partitioned queue's grow with a resize (EventHub.resubscribe)
    },
    what: 'cancel notices',
    decode: (message) => jsonArray(message) as CancelNotice[],
  };
}

/**
 * Listens to the cancel notices of one Queue object: `notice` for each, `active` whenever the
 * subscription becomes active (notices before it were missed). Returns the end of it.
 */
export function watchCancels(hub: EventHub<CancelNotice>, notice: (n: CancelNotice) => void, active: () => void): () => void {
  const notices = hub.events$.subscribe(notice);
  const again = hub.resubscribed$.subscribe(active);
  hub.open().then(active, () => undefined); // rejected only once closed
  return () => {
    again.unsubscribe();
    notices.unsubscribe();
  };
}
