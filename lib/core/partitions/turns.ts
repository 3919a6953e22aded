import type { LeaseStep } from '../leases/lease-step.js';
import { untilDue } from '../leases/leasing.js';

/**
 * Which partitions a worker of a partitioned queue leases from, in what order
 * (docs/scale-out.md "Leasing across partitions"). The rule: a lease call walks, from the
 * rotation's point, the partitions that may have work (a wake-up came from it, its last lease
 * filled what was asked, or its next delayed job is due by now), until it has what it asked
 * for; the rotation's point then moves one past the first of them. So each partition that may
 * have work is first within N calls whatever the others hold: none starves, and a partition
 * that keeps filling its calls keeps its place in every walk. With none that may have work,
 * the call looks at the next partition only (an idle worker's safety look costs one call, as
 * a plain queue's does).
 */
export class Turns {
  private readonly maybe: boolean[];
  /**
   * Wake-ups heard from each partition so far. A wake-up can arrive before the reply of a lease
   * call that Redis ran before the add it tells of (they come on two connections): that reply
   * must not clear the mark, so saw() clears it only when none came since the call was sent.
   */
  private readonly heard: number[];
  /** When each partition's next delayed job is due, on this process's clock (the masters' clocks may differ). */
  private readonly dueAt: Array<number | undefined>;
  private next: number;

  constructor(private readonly n: number) {
    this.maybe = new Array<boolean>(n).fill(true); // nothing known yet: look everywhere once
    this.heard = new Array<number>(n).fill(0);
    this.dueAt = new Array<number | undefined>(n).fill(undefined);
    this.next = Math.floor(Math.random() * n);
  }

  /** A wake-up from partition `i`. */
  mark(i: number): void {
    this.maybe[i] = true;
    this.heard[i]! += 1;
  }

  /** Wake-ups may have been missed (a resubscription): every partition may have work. */
  markAll(): void {
    for (let i = 0; i < this.n; i += 1) this.mark(i);
  }

  /** Taken before a lease call on partition `i`, given back to saw(). */
  heardFrom(i: number): number {
    return this.heard[i]!;
  }

  /** Some partition may have work now. */
  anyWork(now = Date.now()): boolean {
    for (let i = 0; i < this.n; i += 1) if (this.mayHave(i, now)) return true;
    return false;
  }

  /** The partitions to walk for one lease call, in order; moves the rotation on. */
  plan(): number[] {
    const now = Date.now();
    const out: number[] = [];
    for (let k = 0; k < this.n; k += 1) {
      const i = (this.next + k) % this.n;
      if (this.mayHave(i, now)) out.push(i);
    }
    if (out.length === 0) out.push(this.next);
    this.next = (out[0]! + 1) % this.n;
    return out;
  }

  /** What a lease call on partition `i` that asked for `asked` jobs found; `heard`: heardFrom(i) when it was sent. */
  saw(i: number, step: LeaseStep<unknown>, asked: number, heard: number): void {
    const filled = !step.paused && asked > 0 && step.leases.length >= asked;
    this.maybe[i] = filled || this.heard[i] !== heard;
    const due = untilDue(step);
    this.dueAt[i] = due === undefined ? undefined : Date.now() + due;
  }

  /** Ms until the earliest known delayed job of any partition is due; undefined when none is known. */
  dueIn(now = Date.now()): number | undefined {
    let min: number | undefined;
    for (const at of this.dueAt) if (at !== undefined && (min === undefined || at < min)) min = at;
    return min === undefined ? undefined : Math.max(1, min - now);
  }

  private mayHave(i: number, now: number): boolean {
    const due = this.dueAt[i];
    return this.maybe[i]! || (due !== undefined && due <= now);
  }
}
