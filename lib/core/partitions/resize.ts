import { QueueDeletedError, RelqError, ValidationError } from '../errors.js';
import type { Queue } from '../queue/queue.js';
import type { OwnKeysScript } from '../redis/script-def.js';
import type { ScriptName, ScriptOp } from '../redis/script-code.js';
import { PARTITION_BUCKETS, PartitionLayout } from './layout.js';
import type { MapCheck } from './map-check.js';
import { partitionInternalsOf, type PartitionInternals } from './partition-internals.js';
import type { PartitionSet } from './partition-set.js';
import { fencePartitionScript, handoverMapScript, handoverScanScript, releasePartitionScript, resizeMapScript } from './scripts.js';

/** Records one step of a handover's look at a partition reads, about. */
const SCAN_COUNT = 1_000;

/**
 * A resize was refused: another is under way with another number, or the queue's map changed
 * meanwhile. Nothing was written.
 */
export class ResizeRefusedError extends RelqError {
  constructor(readonly queue: string, reason: string) {
    super(`queue '${queue}': resize refused: ${reason}`, 'RELQ_RESIZE_REFUSED');
  }
}

/** What a resize needs of its PartitionedQueue object. */
export interface ResizeParts<Data, Result> {
  readonly name: string;
  readonly set: PartitionSet<Data, Result>;
  readonly checkMap: MapCheck;
  /** An operation on the queue's map. */
  runOnMap<Args, Result2, Op extends ScriptOp>(script: OwnKeysScript<ScriptName, Args, Result2, Op>, args: Args): Promise<Result2>;
  /** Partition `i` under `layout`, outside the set (a resize holds its new partitions before the map names them). */
  open(i: number, layout: PartitionLayout): Queue<Data, Result>;
  /** Lists the queue again with its number of partitions now (listQueues, `relq queues`). */
  relist(): Promise<void>;
  /** Whether the queue splits a limit into shares per partition (globalConcurrency, limiter): a resize would change them. */
  hasShares(): Promise<boolean>;
}

/**
 * Starts growing the queue to `to` partitions (docs/scale-out.md "Changing the number of
 * partitions"). The new partitions are held first, so that no job routed to them runs before
 * the handover; then the map takes the new number and epoch (resize-map.lua), and every old
 * partition learns the epoch (fence-partition.lua): from then on an add routed with the old
 * map is refused and routed anew. Returns the new epoch; the same call again, or a resize to
 * the number under way, returns it too.
 */
export async function startResize<Data, Result>(r: ResizeParts<Data, Result>, to: number): Promise<number> {
  await r.checkMap();
  const map = await r.checkMap.refresh();
  if (!Number.isSafeInteger(to) || to < map.partitions || to > PARTITION_BUCKETS) {
    throw new ValidationError('partitions', `must be an integer from ${map.partitions} (the queue's number now: a resize only adds partitions) to ${PARTITION_BUCKETS}, got ${String(to)}`);
  }
  if (to === map.partitions) return map.epoch;
  if (map.hold) throw new ResizeRefusedError(r.name, `the handover of the resize to ${map.partitions} partitions is still under way (sweep() or resize() drives it to its end)`);
  if (await r.hasShares()) {
    throw new ResizeRefusedError(r.name, 'the queue splits globalConcurrency or a limiter into shares per partition, which a resize does not move yet (docs/scale-out.md)');
  }
  const epoch = map.epoch + 1;
  const future = new PartitionLayout([...map.sizes, to]);
  const added = future.added.map((i) => r.open(i, future));
  try {
    await Promise.all(added.map((q) => partitionInternalsOf(q)!.run(fencePartitionScript, { epoch, hold: true })));
  } finally {
    await Promise.all(added.map((q) => q.close()));
  }
  const reply = await r.runOnMap(resizeMapScript, { from: map.partitions, to });
  if (reply.kind === 'none') throw new QueueDeletedError(r.name);
  if (reply.kind === 'stale') throw new ResizeRefusedError(r.name, `its map changed meanwhile (${reply.partitions} partitions now): read it again and ask again`);
  if (reply.kind === 'busy') throw new ResizeRefusedError(r.name, 'another resize began meanwhile');
  await r.checkMap.refresh();
  await fence(r.set, reply.epoch);
  await r.relist();
  return reply.epoch;
}

/**
 * One step of a resize's handover: true once it has ended (or none is under way). The new
 * partitions are released when no old partition holds an unfinished job of a bucket that
 * moved, so each moved key's older jobs run before its newer ones (per-key order); group
 * overrides of moved groups move with them first. Idempotent, and safe beside another step in
 * another process: the fence is set again first (a resize call that stopped half-way is
 * completed), a release ends a hold once per epoch.
 */
export async function handoverStep<Data, Result>(r: ResizeParts<Data, Result>): Promise<boolean> {
  await r.checkMap();
  const map = await r.checkMap.refresh();
  if (!map.hold) return true;
  const { set } = r;
  const layout = set.layout;
  await fence(set, map.epoch);
  const old = layout.sizes[layout.sizes.length - 2]!;
  const moved = movedBuckets(layout);
  const holding = await Promise.all(set.calls.slice(0, old).map((c) => holdsMoved(c, moved)));
  if (holding.some(Boolean)) return false;
  await moveGroupOverrides(set, old);
  await Promise.all(layout.added.map((i) => set.calls[i]!.run(releasePartitionScript, {})));
  await r.runOnMap(handoverMapScript, { epoch: map.epoch });
  await r.checkMap.refresh();
  return true;
}

/** Every partition learns the epoch; the ones the last growth added are held (once per epoch). */
async function fence<Data, Result>(set: PartitionSet<Data, Result>, epoch: number): Promise<void> {
  const old = set.layout.sizes.length > 1 ? set.layout.sizes[set.layout.sizes.length - 2]! : set.n;
  await Promise.all(set.calls.map((c, i) => c.run(fencePartitionScript, { epoch, hold: i >= old })));
}

/** One character per bucket, '1' for a bucket the last growth moved (handover-scan.lua). */
function movedBuckets(layout: PartitionLayout): string {
  const bits = new Array<string>(PARTITION_BUCKETS).fill('0');
  for (const b of layout.moved) bits[b] = '1';
  return bits.join('');
}

/** Whether a partition holds an unfinished job of a moved bucket: one pass over its records, stopped at the first. */
async function holdsMoved(call: PartitionInternals, moved: string): Promise<boolean> {
  let cursor = '0';
  do {
    const step = await call.run(handoverScanScript, { cursor, count: SCAN_COUNT, moved });
    if (step.found) return true;
    cursor = step.cursor;
  } while (cursor !== '0');
  return false;
}

/** A group's override lives where its jobs are: an override of a group that moved goes with it. */
async function moveGroupOverrides<Data, Result>(set: PartitionSet<Data, Result>, old: number): Promise<void> {
  for (let i = 0; i < old; i += 1) {
    const overrides = await set.queues[i]!.getGroupOverrides();
    for (const [group, override] of Object.entries(overrides)) {
      const owner = set.layout.partitionOfKey(group);
      if (owner === i) continue;
      await set.queues[owner]!.setGroupOverride(group, override);
      await set.queues[i]!.setGroupOverride(group, null);
    }
  }
}
