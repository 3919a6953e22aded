import type { LeaseStep } from '../leases/lease-step.js';
import { untilDue } from '../leases/leasing.js';

/** The first back-off of a partition whose call failed, and the longest. */
const BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;

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
  /** Until when each partition is left out after a failed call (0: it is not), and how many failed in a row. */
  private readonly downUntil: number[];
  private readonly failures: number[];
  private next: number;

  constructor(private n: number) {
    this.maybe = new Array<boolean>(n).fill(true); // nothing known yet: look everywhere once
    this.heard = new Array<number>(n).fill(0);
    this.dueAt = new Array<number | undefined>(n).fill(undefined);
    this.downUntil = new Array<number>(n).fill(0);
    this.failures = new Array<number>(n).fill(0);
    this.next = Math.floor(Math.random() * n);
  }

  /** A resize added partitions up to `n`: each may have work (a resize may also have replaced them all: every one is looked at). */
  grow(n: number): void {
    for (let i = this.n; i < n; i += 1) {
      this.maybe.push(true);
      this.heard.push(0);
      this.dueAt.push(undefined);
      this.downUntil.push(0);
      this.failures.push(0);
    }
    this.n = n;
    this.markAll();
  }

  /**
   * A call on partition `i` failed (its master away, failing over): it is left out of the
   * walks for a back-off (250 ms, doubling to 5 s), then tried again, so that the other
   * partitions go on meanwhile.
   */
  failed(i: number, now = Date.now()): void {
    this.failures[i]! += 1;
    this.downUntil[i] = now + Math.min(BACKOFF_MS * 2 ** (this.failures[i]! - 1), MAX_BACKOFF_MS);
    this.maybe[i] = true; // look again once it is back
  }

  /** A call on partition `i` succeeded. */
  answered(i: number): void {
    this.failures[i] = 0;
    this.downUntil[i] = 0;
  }

  /** Whether partition `i` is left out now after a failed call. */
  isDown(i: number, now = Date.now()): boolean {
    return this.downUntil[i]! > now;
  }

  /**
   * The partitions whose back-off ended, each now marked as being tried: the caller sends each
   * a call of its own, aside from the walks, and reports answered() or failed(). Until then
   * they stay out of the walks, so a master still away holds up no lease call.
   */
  takeRetries(now = Date.now()): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.n; i += 1) {
      if (this.failures[i]! > 0 && this.downUntil[i]! <= now) {
        this.downUntil[i] = Infinity;
        out.push(i);
      }
    }
    return out;
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

  /**
   * The partitions to walk for one lease call, in order; moves the rotation on. A partition
   * left out after a failure is not walked; with every one left out, the one back first is
   * tried (its failure then fails the call, and the worker backs off).
   */
  plan(): number[] {
    const now = Date.now();
    const out: number[] = [];
    let up: number | undefined;
    for (let k = 0; k < this.n; k += 1) {
      const i = (this.next + k) % this.n;
      if (this.isDown(i, now)) continue;
      up ??= i;
      if (this.mayHave(i, now)) out.push(i);
    }
    if (out.length === 0) out.push(up ?? this.backFirst());
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

  /** Ms until the earliest known delayed job of any partition is due, or a partition left out is back; undefined when none is known. */
  dueIn(now = Date.now()): number | undefined {
    let min: number | undefined;
    for (const at of this.dueAt) if (at !== undefined && (min === undefined || at < min)) min = at;
    for (const at of this.downUntil) if (at > now && at !== Infinity && (min === undefined || at < min)) min = at;
    return min === undefined ? undefined : Math.max(1, min - now);
  }

  private backFirst(): number {
    let first = 0;
    for (let i = 1; i < this.n; i += 1) if (this.downUntil[i]! < this.downUntil[first]!) first = i;
    return first;
  }

  private mayHave(i: number, now: number): boolean {
    const due = this.dueAt[i];
    return this.maybe[i]! || (due !== undefined && due <= now);
  }
}
