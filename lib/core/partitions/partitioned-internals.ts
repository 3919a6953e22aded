import { newRequestId } from '../adds/ids.js';
import type { EventHub } from '../events/event-hub.js';
import { watchCancels, type CancelNotice } from '../worker/cancel-notices.js';
import type { LeaseStep } from '../leases/lease-step.js';
import type { Lease, LeaseRef } from '../leases/types.js';
import type { QueueCounts, SweepResult } from '../management/read-types.js';
import type { QueueInternals, WorkWait } from '../queue/internals.js';
import type { SettleItem } from '../settles/settle-items.js';
import type { Touched } from '../settles/settling.js';
import { partitionOfGeneratedId, partitionOfKey } from './layout.js';
import { mergeCounts, mergeSweeps } from './merge.js';
import type { Turns } from './turns.js';
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

/**
 * What a Worker (or BatchWorker) of a partitioned queue calls in place of a queue's
 * internals: the same calls, spread over the partitions (docs/scale-out.md "Leasing across
 * partitions"). A lease call settles each partition's outcomes in that partition and leases
 * by the turns (turns.ts); waits are one subscription to every partition's wake-ups
 * (wake-ups.ts); a call about a lease goes to the partition its token names.
 */
export class PartitionedInternals<Data> implements QueueInternals<Data> {
  /** Lease calls that failed: the partitions they called, in order, to be called again in that order by their retry. */
  private readonly retried = new Map<string, number[]>();

  constructor(
    private readonly parts: ReadonlyArray<QueueInternals<Data>>,
    private readonly turns: Turns,
    private readonly waits: PartitionWaits,
    private readonly cancels: EventHub<CancelNotice>,
    private readonly closed: () => boolean,
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

  async leaseStep(items: SettleItem[], count: number, leaseMs: number, _woken: boolean, reqId = newRequestId(), worker = ''): Promise<LeaseStep<Data>> {
    const settles = byPartition(items, (it) => partitionOfToken(it[2]));
    const settled = new Array<boolean>(items.length);
    const plan = this.retried.get(reqId) ?? (count > 0 ? this.turns.plan() : []);
    const called: number[] = [];
    const leases: Array<Lease<Data>> = [];
    const steps: Array<LeaseStep<Data>> = [];
    // The first partition's outcomes go with its lease call; the others' are settled at once beside it.
    const first = plan[0];
    const aside = [...settles].filter(([i]) => i !== first);
    const settling = Promise.all(
      aside.map(async ([i, part]) => {
        const answers = await this.parts[i]!.settle(part.items, settleReqId(reqId, i));
        part.at.forEach((k, j) => (settled[k] = answers[j]!));
      }),
    );
    try {
      for (const i of plan) {
        const asked = count - leases.length;
        if (asked <= 0 && i !== first) break;
        const own = i === first ? settles.get(i) : undefined;
        called.push(i);
        const heard = this.turns.heardFrom(i);
        // Never 'woken': every worker waiting heard the wake-up, none need be passed on (leases/lease-jobs.lua).
        const step = await this.parts[i]!.leaseStep(own?.items ?? [], Math.max(asked, 0), leaseMs, false, partitionReqId(reqId, i), worker);
        own?.at.forEach((k, j) => (settled[k] = step.settled[j]!));
        this.turns.saw(i, step, asked, heard);
        leases.push(...step.leases);
        steps.push(step);
      }
      await settling;
    } catch (err) {
      await settling.catch(() => undefined);
      this.retried.set(reqId, called.length > 0 ? called : plan);
      throw err;
    }
    this.retried.delete(reqId);
    const now = Date.now();
    const dueIn = this.turns.dueIn(now);
    return {
      settled,
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

  async settle(items: SettleItem[], reqId = newRequestId()): Promise<boolean[]> {
    const settled = new Array<boolean>(items.length);
    await Promise.all(
      [...byPartition(items, (it) => partitionOfToken(it[2]))].map(async ([i, part]) => {
        const answers = await this.parts[i]!.settle(part.items, settleReqId(reqId, i));
        part.at.forEach((k, j) => (settled[k] = answers[j]!));
      }),
    );
    return settled;
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
    const n = this.parts.length;
    return this.parts[partitionOfGeneratedId(id, n) ?? partitionOfKey(id, n)]!.childrenResults(id);
  }

  async sweepReporting(opts: { limit?: number }): Promise<{ result: SweepResult; stalledIds: string[] }> {
    const all = await Promise.all(this.parts.map((p) => p.sweepReporting(opts)));
    return { result: mergeSweeps(all.map((s) => s.result)), stalledIds: all.flatMap((s) => s.stalledIds) };
  }

  async countsAndAge(): Promise<{ counts: QueueCounts; oldestPendingAgeMs: number | undefined }> {
    const all = await Promise.all(this.parts.map((p) => p.countsAndAge()));
    const ages = all.map((a) => a.oldestPendingAgeMs).filter((a): a is number => a !== undefined);
    return { counts: mergeCounts(all.map((a) => a.counts)), oldestPendingAgeMs: ages.length ? Math.max(...ages) : undefined };
  }

  async eventsOpen(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.eventsOpen()));
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
