import type { PreparedAdd } from '../adds/producer.js';
import type { AddResult, BulkJob } from '../adds/types.js';
import { readStoredMetrics } from '../metrics-history/metrics-history.js';
import type { StoredMetrics } from '../metrics-history/scripts.js';
import type { MetricsRange } from '../metrics-history/types.js';
import type { QueueParts } from '../queue/queue-parts.js';
import type { ScriptName, ScriptOp } from '../redis/script-code.js';
import type { OwnKeysScript, QueueScript } from '../redis/script-def.js';

/**
 * @internal What a PartitionedQueue uses of each of its partitions beyond a Queue's public API
 * and its QueueInternals: an add in two halves, so that every part of a bulk add is checked
 * before any is sent, and the calls on the queue's map.
 */
export interface PartitionInternals {
  prepareAdd(jobs: ReadonlyArray<BulkJob<unknown>>, mode: 'wait' | 'try', waitMs: number | undefined, indexOf: (i: number) => number): PreparedAdd;
  sendAdd(prepared: PreparedAdd, mode: 'wait' | 'try'): Promise<AddResult[]>;
  runOwnKeys<Args, Result, Op extends ScriptOp>(script: OwnKeysScript<ScriptName, Args, Result, Op>, keys: string[], args: Args): Promise<Result>;
  /** One of the partitioned queue's own operations on this partition (a resize's, resize.ts). */
  run<Args, Result, Op extends ScriptOp>(script: QueueScript<ScriptName, Args, Result, Op>, args: Args): Promise<Result>;
  /** The epoch of the queue's map this partition's adds carry (partitions/epoch-fence.lua). */
  setMapEpoch(epoch: number): void;
  /** Whether the partition holds job `id` (one HEXISTS: where a job of a chosen id lives). */
  hasJob(id: string): Promise<boolean>;
  /** The partition's stored metrics minutes, merged by the caller (metrics-history.ts metricsOf). */
  readMetrics(range: MetricsRange): Promise<StoredMetrics>;
}

const registry = new WeakMap<object, PartitionInternals>();

/** Made by Queue's constructor for a Queue object that is a partition (partition-option.ts). */
export function registerPartitionInternals<Data, Result>(queue: object, p: QueueParts<Data, Result>): void {
  const { producer, ctx } = p;
  registry.set(queue, {
    prepareAdd: (jobs, mode, waitMs, indexOf) => producer.prepare(jobs as ReadonlyArray<BulkJob<Data>>, 'addBulk', mode, waitMs, indexOf),
    sendAdd: (prepared, mode) => producer.sendPrepared(prepared, 'addBulk', mode).then((r) => ctx.replicated(mode === 'try' ? 'tryAddBulk' : 'addBulk', r)),
    runOwnKeys: (script, keys, args) => ctx.runOwnKeys(script, keys, args),
    run: (script, args) => ctx.run(script, args),
    setMapEpoch: (epoch) => {
      ctx.mapEpoch = epoch;
    },
    hasJob: (id) =>
      ctx.handle.client.hexists(ctx.keys.byName.jobs, id).then(
        (n) => n === 1,
        (err: unknown) => {
          throw ctx.wrapError(err, 'getJob');
        },
      ),
    readMetrics: (range) => readStoredMetrics(ctx, range),
  });
}

export function partitionInternalsOf(queue: object): PartitionInternals | undefined {
  return registry.get(queue);
}
