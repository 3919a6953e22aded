import { ownKeysScript, queueScript } from '../redis/script-def.js';

/** The map of a partitioned queue as stored (partition-map.lua). */
export interface StoredPartitionMap {
  partitions: number;
  epoch: number;
  /** The numbers of partitions it had, oldest first, the last being `partitions`. */
  sizes: number[];
  /** A resize's new partitions wait for the old ones' jobs of the keys they received. */
  hold: boolean;
}

/** Reads a partitioned queue's map, writing it first when there is none (partition-map.lua). */
export const partitionMapScript = ownKeysScript({
  name: 'partitionMap',
  file: 'partitions/partition-map.lua',
  ops: ['partitionMap'],
  ownKeys: 1,
  creates: true,
  encode: (a: { partitions: number }) => [a.partitions],
  decode: (reply: unknown): StoredPartitionMap => {
    const [n, epoch, sizes, hold] = reply as [string, string, string, string];
    return { partitions: Number(n), epoch: Number(epoch), sizes: sizes === '' ? [Number(n)] : sizes.split(',').map(Number), hold: hold !== '' };
  },
});

/** resize-map.lua's answer. */
export type ResizeReply = { kind: 'ok'; epoch: number } | { kind: 'stale'; partitions: number } | { kind: 'busy'; epoch: number } | { kind: 'none' };

/** Starts a growth of the queue's partitions in its map (resize-map.lua). */
export const resizeMapScript = ownKeysScript({
  name: 'resizeMap',
  file: 'partitions/resize-map.lua',
  ops: ['resize'],
  ownKeys: 1,
  encode: (a: { from: number; to: number }) => [a.from, a.to],
  decode: (reply: unknown): ResizeReply => {
    const [kind, value] = reply as [string, string | undefined];
    if (kind === 'ok') return { kind, epoch: Number(value) };
    if (kind === 'stale') return { kind, partitions: Number(value) };
    if (kind === 'busy') return { kind, epoch: Number(value) };
    return { kind: 'none' };
  },
});

/** Ends a resize's handover in the map (handover-map.lua): true when this call ended it. */
export const handoverMapScript = ownKeysScript({
  name: 'handoverMap',
  file: 'partitions/handover-map.lua',
  ops: ['resize'],
  ownKeys: 1,
  encode: (a: { epoch: number }) => [a.epoch],
  decode: (reply: unknown) => reply === 1,
});

/** A partition learns a resize's epoch; a new one is held (fence-partition.lua). */
export const fencePartitionScript = queueScript({
  name: 'fencePartition',
  file: 'partitions/fence-partition.lua',
  ops: ['resize'],
  creates: true,
  encode: (a: { epoch: number; hold: boolean }) => [a.epoch, a.hold ? 1 : 0],
  decode: () => undefined,
});

/** Whether a partition still holds an unfinished job of a moved bucket, one step of a pass (handover-scan.lua). */
export const handoverScanScript = queueScript({
  name: 'handoverScan',
  file: 'partitions/handover-scan.lua',
  ops: ['resize'],
  readOnly: true,
  encode: (a: { cursor: string; count: number; moved: string }) => [a.cursor, a.count, a.moved],
  decode: (reply: unknown) => {
    const [cursor, found] = reply as [string, number];
    return { cursor, found: found === 1 };
  },
});

/** A held partition leases from now on (release-partition.lua): true when it was held. */
export const releasePartitionScript = queueScript({
  name: 'releasePartition',
  file: 'partitions/release-partition.lua',
  ops: ['resize'],
  encode: () => [],
  decode: (reply: unknown) => reply === 1,
});

export const PARTITION_SCRIPTS = [partitionMapScript, resizeMapScript, handoverMapScript, fencePartitionScript, handoverScanScript, releasePartitionScript] as const;
