import { newRequestId } from '../adds/ids.js';
import type { EventHub } from '../events/event-hub.js';
import { watchCancels, type CancelNotice } from '../worker/cancel-notices.js';
import type { LeaseStep } from '../leases/lease-step.js';
import type { Lease, LeaseRef } from '../leases/types.js';
import type { QueueCounts, SweepResult } from '../management/read-types.js';
import type { QueueInternals, WorkWait } from '../queue/internals.js';
import type { SettleItem } from '../settles/settle-items.js';
import type { Touched } from '../settles/settling.js';
import { ConnectionError } from '../errors.js';
import { requeueItem } from '../settles/settle-items.js';
import { CallClock, LATE } from './late-calls.js';
import { partitionOfGeneratedId } from './layout.js';
import { mergeCounts, mergeSweeps } from './merge.js';
import type { Turns } from './turns.js';
import type { MapCheck } from './map-check.js';
import type { PartitionWaits } from './wake-ups.js';

/**
 * The request id of a lease call on partition `i`: the worker's own, marked with the
 * partition. The leases it grants carry it in their tokens (`<reqId>.<n>@…`,
 * redis/lease-token.lua), so a lease says its partition with nothing kept in memory; and a
 * call tried again after a lost reply reaches the same partition's replay record
 * (redis/replay.lua).
 */
const partitionReqId = (reqId: string, i: number) => `${reqId}-p${i}`;
/**
 * The request id of a settle call on partition `i`, never a lease call's: one worker call may
 * settle on a partition and then lease from it, and the lease would be answered from the
 * settle's replay record (no leases) if they shared an id.
 */
const settleReqId = (reqId: string, i: number) => `${reqId}-s${i}`;
const TOKEN_PARTITION = /^[^.]*-p(\d+)\./;

/** The partition of a lease granted through a partitioned queue's worker calls, by its token. */
function partitionOfToken(token: string): number {
  const m = TOKEN_PARTITION.exec(token);
  if (!m) throw new Error(`relq: lease token '${token}' names no partition`);
  return Number(m[1]);
}

/** `items` split by partition, each with its places in the list. */
function byPartition<T>(items: readonly T[], partitionOf: (item: T) => number): Map<number, { items: T[]; at: number[] }> {
  const parts = new Map<number, { items: T[]; at: number[] }>();
  items.forEach((item, k) => {
    const i = partitionOf(item);
    let part = parts.get(i);
    if (!part) parts.set(i, (part = { items: [], at: [] }));
    part.items.push(item);
    part.at.push(k);
  });
  return parts;
}

/** An outcome sent in a call that failed: the call's request id and kind, to send it again as it was. */
interface Unsent {
  readonly id: string;
  readonly kind: 'lease' | 'settle';
  readonly partition: number;
}

/** One call on one partition of a worker call: its request id and the outcomes it carries (their places in the worker's list). */
interface SettleCallOf {
  readonly partition: number;
  readonly id: string;
  readonly items: SettleItem[];
  readonly at: number[];
}

/**
 * The outcomes of one worker call split into the partition calls that carry them: outcomes of
 * an earlier failed call grouped under its id again, fresh ones by partition; and the answers.
 */
class Call {
  readonly settled: Array<boolean | undefined>;
  private readonly groups = new Map<string, SettleCallOf & { kind: Unsent['kind'] }>();
  private readonly fresh = new Map<number, { items: SettleItem[]; at: number[] }>();
  private sent = 0;
  private answered = 0;
  private firstError: unknown;

  constructor(items: readonly SettleItem[], unsent: ReadonlyMap<string, Unsent>, inFlight: ReadonlySet<string>, private readonly reqId: string) {
    this.settled = new Array<boolean | undefined>(items.length);
    items.forEach((item, k) => {
      const earlier = unsent.get(item[2]);
      if (earlier && inFlight.has(earlier.id)) return; // its call has not ended: kept, unanswered
      if (earlier) {
        let g = this.groups.get(earlier.id);
        if (!g) this.groups.set(earlier.id, (g = { ...earlier, items: [], at: [] }));
        g.items.push(item);
        g.at.push(k);
        return;
      }
      const i = partitionOfToken(item[2]);
      let part = this.fresh.get(i);
      if (!part) this.fresh.set(i, (part = { items: [], at: [] }));
      part.items.push(item);
      part.at.push(k);
    });
  }

  /** The fresh outcomes of partition `i`, taken out of the settle calls. */
  takeFresh(i: number): { items: SettleItem[]; at: number[] } | undefined {
    const part = this.fresh.get(i);
    this.fresh.delete(i);
    return part;
  }

  hasLeaseGroup(i: number): boolean {
    for (const g of this.groups.values()) if (g.kind === 'lease' && g.partition === i) return true;
    return false;
  }

  /** An earlier lease call of partition `i` to send again, taken out (at most one per call: they are sent one after another). */
  takeLeaseGroup(i: number): SettleCallOf | undefined {
    for (const [id, g] of this.groups) {
      if (g.kind === 'lease' && g.partition === i) {
        this.groups.delete(id);
        return g;
      }
    }
    return undefined;
  }

  /** The earlier lease calls left, taken out. */
  leaseGroups(): SettleCallOf[] {
    const out = [...this.groups.values()].filter((g) => g.kind === 'lease');
    for (const g of out) this.groups.delete(g.id);
    return out;
  }

  /** The settle calls: earlier ones under their ids, fresh outcomes one call per partition (`all`: earlier lease calls' outcomes too, as settles under their ids). */
  settleCalls(all = false): SettleCallOf[] {
    const out: SettleCallOf[] = [...this.groups.values()].filter((g) => all || g.kind === 'settle');
    for (const [i, part] of this.fresh) out.push({ partition: i, id: settleReqId(this.reqId, i), ...part });
    return out;
  }

  answer(c: SettleCallOf, answers: ReadonlyArray<boolean | undefined>, unsent: Map<string, Unsent>): void {
    this.sent += 1;
    this.answered += 1;
    c.at.forEach((k, j) => (this.settled[k] = answers[j]));
    for (const item of c.items) unsent.delete(item[2]);
  }

  fail(c: SettleCallOf, kind: Unsent['kind'], err: unknown, unsent: Map<string, Unsent>): void {
    this.sent += 1;
    this.firstError ??= err;
    for (const item of c.items) unsent.set(item[2], { id: c.id, kind, partition: c.partition });
  }

  /** A call in which every partition call failed fails (the worker backs off and sends it again). */
  throwIfNothingAnswered(): void {
    if (this.sent > 0 && this.answered === 0) throw this.firstError;
  }

  throwIfAnyFailed(): void {
    if (this.firstError !== undefined) throw this.firstError;
  }
}


/**
 * What a Worker (or BatchWorker) of a partitioned queue calls in place of a queue's
 * internals: the same calls, spread over the partitions (docs/scale-out.md "Leasing across
 * partitions"). A lease call settles each partition's outcomes in that partition and leases
 * by the turns (turns.ts); waits are one subscription to every partition's wake-ups
 * (wake-ups.ts); a call about a lease goes to the partition its token names.
 */
export class PartitionedInternals<Data> implements QueueInternals<Data> {
  /**
   * Outcomes whose call failed (its partition's master away), by token: the call's request id
   * and kind. They come back in a later call and are sent again together under that id, so
   * that a call Redis ran before its reply was lost answers as it did (redis/replay.lua).
   */
  private readonly unsent = new Map<string, Unsent>();
  /** Ids of partition calls that went on without an answer: their outcomes are not sent again until they end. */
  private readonly inFlight = new Set<string>();
  private readonly clock = new CallClock();

  constructor(
    private readonly parts: ReadonlyArray<QueueInternals<Data>>,
    private readonly turns: Turns,
    private readonly waits: PartitionWaits,
    private readonly cancels: EventHub<CancelNotice>,
    private readonly closed: () => boolean,
    /** The partition a key routes to now (the queue's map). */
    private readonly route: (key: string) => number,
    /** After each sweep: a step of a resize's handover, when one is under way (resize.ts). */
    private readonly afterSweep: () => Promise<void>,
    /** The object's first look at the queue's map (map-check.ts): its partitions are the map's only after it. */
    private readonly checkMap: MapCheck,
  ) {}

  get name(): string {
    return this.parts[0]!.name;
  }

  get maxPayloadBytes(): number {
    return this.parts[0]!.maxPayloadBytes;
  }

  get warn() {
    return this.parts[0]!.warn;
  }

  get isClosed(): boolean {
    return this.closed();
  }

  /**
   * One worker call: settles each partition's outcomes in that partition and leases by the
   * turns, the first partition's outcomes riding with its lease call. A partition whose call
   * fails is left out for a back-off (turns.ts) and its outcomes wait (answered undefined,
   * kept by the worker's outbox), so the others go on; only a call in which every partition
   * failed fails.
   */
  async leaseStep(items: SettleItem[], count: number, leaseMs: number, _woken: boolean, reqId = newRequestId(), worker = ''): Promise<LeaseStep<Data>> {
    if (!this.checkMap.passed) await this.checkMap(); // a worker that only leases still follows the map
    for (const i of this.turns.takeRetries()) this.retry(i, leaseMs);
    const call = new Call(items, this.unsent, this.inFlight, reqId);
    const plan = count > 0 ? this.turns.plan() : [];
    const first = plan[0];
    // The first partition's fresh outcomes go with its lease call (unless an earlier lease call of it is being sent again).
    const riding = first !== undefined && !call.hasLeaseGroup(first) ? call.takeFresh(first) : undefined;
    const aside = Promise.all(call.settleCalls().map((c) => this.sendSettle(call, c)));
    const leases: Array<Lease<Data>> = [];
    const steps: Array<LeaseStep<Data>> = [];
    const lease = async (i: number, asked: number, c: SettleCallOf): Promise<void> => {
      const heard = this.turns.heardFrom(i);
      try {
        const sent = this.parts[i]!.leaseStep(c.items, Math.max(asked, 0), leaseMs, false, c.id, worker);
        const step = await this.clock.within(sent, (late) => this.lateLease(i, c, late));
        if (step === LATE) return this.failedOn(i, c, 'lease', `no answer within ${this.clock.waitMs} ms`, call, true);
        this.turns.answered(i);
        call.answer(c, step.settled, this.unsent);
        this.turns.saw(i, step, asked, heard);
        leases.push(...step.leases);
        steps.push(step);
      } catch (err) {
        this.failedOn(i, c, 'lease', err, call);
      }
    };
    for (const i of plan) {
      const asked = count - leases.length;
      if (asked <= 0 && i !== first) break;
      // Never 'woken': every worker waiting heard the wake-up, none need be passed on (leases/lease-jobs.lua).
      await lease(i, asked, call.takeLeaseGroup(i) ?? { partition: i, id: partitionReqId(reqId, i), items: riding && i === first ? riding.items : [], at: riding && i === first ? riding.at : [] });
    }
    // Earlier lease calls sent again on partitions not walked now: their outcomes, and any leases their first run granted.
    await Promise.all(call.leaseGroups().map((c) => lease(c.partition, 0, c)));
    await aside;
    call.throwIfNothingAnswered();
    const now = Date.now();
    const dueIn = this.turns.dueIn(now);
    return {
      settled: call.settled,
      leases,
      now,
      nextDue: dueIn === undefined ? undefined : now + dueIn,
      paused: steps.length > 0 && steps.every((s) => s.paused),
      closed: steps.length > 0 && steps.every((s) => s.closed),
      deleted: steps.some((s) => s.deleted),
      ghosts: steps.reduce((n, s) => n + s.ghosts, 0),
      notReplicated: steps.find((s) => s.notReplicated)?.notReplicated,
    };
  }

  /** Settles outcomes in their partitions, all at once; fails when one partition's call fails (its outcomes are kept to be sent again under their id). */
  async settle(items: SettleItem[], reqId = newRequestId()): Promise<boolean[]> {
    const call = new Call(items, this.unsent, this.inFlight, reqId);
    await Promise.all(call.settleCalls(true).map((c) => this.sendSettle(call, c, false)));
    call.throwIfAnyFailed();
    return call.settled as boolean[];
  }

  /** One partition's settle call; `skipDown`: not sent while its partition is left out (its outcomes are kept for a later call). */
  private async sendSettle(call: Call, c: SettleCallOf, skipDown = true): Promise<void> {
    if (skipDown && this.turns.isDown(c.partition)) return;
    try {
      const sent = this.parts[c.partition]!.settle(c.items, c.id);
      // a settle that ends late needs nothing more: its outcomes are sent again under its id, and answered as it was
      const answers = skipDown ? await this.clock.within(sent, () => this.inFlight.delete(c.id)) : await sent;
      if (answers === LATE) return this.failedOn(c.partition, c, 'settle', `no answer within ${this.clock.waitMs} ms`, call, true);
      call.answer(c, answers, this.unsent);
      this.turns.answered(c.partition);
    } catch (err) {
      this.failedOn(c.partition, c, 'settle', err, call);
    }
  }

  /**
   * A partition left out is tried again with a call of its own, aside from the worker's calls:
   * a lease call for no job (it changes nothing but due jobs' promotion). Answered, the
   * partition is back in the walks; failed, left out longer.
   */
  private retry(i: number, leaseMs: number): void {
    this.parts[i]!.leaseStep([], 0, leaseMs, false, newRequestId(), '').then(
      () => this.turns.answered(i),
      () => this.turns.failed(i),
    );
  }

  /** A partition call failed, or went on without an answer (`late`): its partition is left out for a while, its outcomes kept under its id. */
  private failedOn(i: number, c: SettleCallOf, kind: Unsent['kind'], err: unknown, call: Call, late = false): void {
    if (!this.turns.isDown(i)) {
      const why = err instanceof Error ? err.message : String(err);
      this.warn({ code: 'RELQ_PARTITION_AWAY', queue: this.name, message: `relq: partition ${i} of queue '${this.name}' did not answer (${why}); the worker goes on with the others and tries it again later` });
    }
    this.turns.failed(i);
    if (late) this.inFlight.add(c.id);
    call.fail(c, kind, err instanceof Error ? err : new ConnectionError(`relq lease: partition ${i} of queue '${this.name}': ${String(err)}`), this.unsent);
  }

  /**
   * A lease call the worker went on without ended. Its jobs go back to pending at once, no
   * attempt counted (the worker has moved on; its room may be taken). Its outcomes, if any, are
   * sent again as a settle under its id: the replay answers them, and no job twice.
   */
  private lateLease(i: number, c: SettleCallOf, late: { value: LeaseStep<Data> } | { error: unknown }): void {
    this.inFlight.delete(c.id);
    if (!('value' in late)) return;
    this.turns.answered(i);
    for (const item of c.items) {
      const u = this.unsent.get(item[2]);
      if (u?.id === c.id) this.unsent.set(item[2], { ...u, kind: 'settle' });
    }
    const back = late.value.leases.map((l) => requeueItem(l, 0, 'shutdown'));
    if (back.length > 0) void this.parts[i]!.settle(back, newRequestId()).catch(() => undefined); // else they expire, and a sweep returns them
  }

  async touchMany(leases: ReadonlyArray<LeaseRef>, extendMs?: number, worker?: string): Promise<Touched[]> {
    if (leases.length === 0) {
      // a worker's registration alone (presence, leaving): in every partition it may be listed in
      await Promise.all(this.parts.map((p) => p.touchMany([], extendMs, worker)));
      return [];
    }
    const touched = new Array<Touched>(leases.length);
    await Promise.all(
      [...byPartition(leases, (l) => partitionOfToken(l.token))].map(async ([i, part]) => {
        const answers = await this.parts[i]!.touchMany(part.items, extendMs, worker);
        part.at.forEach((k, j) => (touched[k] = answers[j]!));
      }),
    );
    return touched;
  }

  waitForWork(wait: WorkWait, ms: number): Promise<boolean> {
    return this.waits.wait(wait, ms);
  }

  updateProgress: QueueInternals<Data>['updateProgress'] = (lease, progress) => this.of(lease).updateProgress(lease, progress);
  log: QueueInternals<Data>['log'] = (lease, line) => this.of(lease).log(lease, line);
  updateData: QueueInternals<Data>['updateData'] = (lease, data) => this.of(lease).updateData(lease, data);
  addChildren: QueueInternals<Data>['addChildren'] = (lease, children, opts) => this.of(lease).addChildren(lease, children, opts);

  /** A flow parent's children's results, from the parent's partition (flows stay in one). */
  childrenResults(id: string): Promise<Record<string, unknown>> {
    return this.parts[partitionOfGeneratedId(id, this.parts.length) ?? this.route(id)]!.childrenResults(id);
  }

  async sweepReporting(opts: { limit?: number }): Promise<{ result: SweepResult; stalledIds: string[] }> {
    const all = await Promise.all(this.parts.map((p) => p.sweepReporting(opts)));
    await this.afterSweep();
    return { result: mergeSweeps(all.map((s) => s.result)), stalledIds: all.flatMap((s) => s.stalledIds) };
  }

  async countsAndAge(): Promise<{ counts: QueueCounts; oldestPendingAgeMs: number | undefined }> {
    const all = await Promise.all(this.parts.map((p) => p.countsAndAge()));
    const ages = all.map((a) => a.oldestPendingAgeMs).filter((a): a is number => a !== undefined);
    return { counts: mergeCounts(all.map((a) => a.counts)), oldestPendingAgeMs: ages.length ? Math.max(...ages) : undefined };
  }

  /** One subscription to every partition's cancel notices (not one per partition: connections grow with masters). */
  watchCancels: QueueInternals<Data>['watchCancels'] = (notice, active) => watchCancels(this.cancels, notice, active);

  openBlocker(): WorkWait {
    return this.waits.open();
  }

  closeBlocker(wait: WorkWait): void {
    this.waits.close(wait);
  }

  private of(lease: LeaseRef): QueueInternals<Data> {
    return this.parts[partitionOfToken(lease.token)]!;
  }
}
