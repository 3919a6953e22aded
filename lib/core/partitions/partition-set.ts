import { Subject, type Observable } from 'rxjs';
import { internalsOf, type QueueInternals } from '../queue/internals.js';
import type { Queue } from '../queue/queue.js';
import { PartitionLayout } from './layout.js';
import { partitionInternalsOf, type PartitionInternals } from './partition-internals.js';
import type { StoredPartitionMap } from './scripts.js';

/** What changed in a PartitionSet: its partitions (some replaced, not only added), or only the hold. */
export interface SetChange {
  readonly partitions: boolean;
  readonly replaced: boolean;
}

/**
 * @internal The partitions of one PartitionedQueue object, as the queue's map last read says
 * (docs/scale-out.md "Changing the number of partitions"). The arrays are shared with the
 * object's reading, producing and leasing parts and change in place: a resize appends
 * partitions; an object declared with a later size than the map's first (a config changed
 * after a resize) replaces, at its first look at the map, the partitions whose tags differ.
 */
export class PartitionSet<Data, Result> {
  layout: PartitionLayout;
  /** The map's epoch the partitions' adds carry (partitions/epoch-fence.lua). */
  epoch = 0;
  /** A resize's new partitions are held (the spread leaves them out). */
  hold = false;
  readonly queues: Array<Queue<Data, Result>> = [];
  readonly calls: PartitionInternals[] = [];
  /** What a Worker of the object calls on each partition (partitioned-internals.ts). */
  readonly parts: Array<QueueInternals<Data>> = [];
  private readonly changed: Array<(change: SetChange) => void> = [];
  /** Each partition opened after the first ones (a resize's, or one replaced): a live events() stream follows it. */
  readonly opened$: Observable<Queue<Data, Result>>;
  // Of unknown data: a Subject of the object's own types would make PartitionedQueue<D> invariant in D.
  private readonly opened = new Subject<Queue<unknown, unknown>>();

  constructor(
    /** Partition `i` under `layout`: a Queue object on the shared connection. */
    private readonly open: (i: number, layout: PartitionLayout) => Queue<Data, Result>,
    declared: number,
  ) {
    this.opened$ = this.opened.asObservable() as Observable<Queue<Data, Result>>;
    this.layout = new PartitionLayout([declared]);
    for (let i = 0; i < declared; i += 1) this.push(this.open(i, this.layout));
  }

  get n(): number {
    return this.layout.n;
  }

  /** Tells `listener` after each change of the partitions or of the hold. */
  onChange(listener: (change: SetChange) => void): void {
    this.changed.push(listener);
  }

  /** Follows the map read: the layout of its sizes, its epoch on every partition's adds. */
  adopt(map: StoredPartitionMap): void {
    const sizes = map.sizes;
    const same = sizes.length === this.layout.sizes.length && sizes.every((s, k) => s === this.layout.sizes[k]);
    const held = this.hold;
    this.hold = map.hold;
    if (map.epoch !== this.epoch) this.setEpoch(map.epoch);
    if (!same) {
      const layout = new PartitionLayout(sizes);
      let replaced = false;
      for (let i = 0; i < layout.n; i += 1) {
        const q = this.queues[i];
        if (q !== undefined && q.keys.tag === layout.tag(q.prefix, q.name, i)) continue;
        const fresh = this.open(i, layout);
        if (q === undefined) {
          this.push(fresh);
        } else {
          replaced = true;
          void q.close().catch(() => undefined); // never used: the object's first look at the map comes before its calls
          this.queues[i] = fresh;
          this.calls[i] = partitionInternalsOf(fresh)!;
          this.parts[i] = internalsOf<Data>(fresh)!;
        }
        this.opened.next(fresh as Queue<unknown, unknown>);
      }
      this.layout = layout;
      this.setEpoch(map.epoch);
      for (const listener of this.changed) listener({ partitions: true, replaced });
    } else if (held !== this.hold) {
      for (const listener of this.changed) listener({ partitions: false, replaced: false });
    }
  }

  private setEpoch(epoch: number): void {
    this.epoch = epoch;
    for (const c of this.calls) c.setMapEpoch(epoch);
  }

  private push(q: Queue<Data, Result>): void {
    this.queues.push(q);
    const call = partitionInternalsOf(q)!;
    call.setMapEpoch(this.epoch);
    this.calls.push(call);
    this.parts.push(internalsOf<Data>(q)!);
  }
}
