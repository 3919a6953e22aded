import { ownKeysScript } from '../redis/script-def.js';

/** The map of a partitioned queue as stored (partition-map.lua). */
export interface StoredPartitionMap {
  partitions: number;
  epoch: number;
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
    const [n, epoch] = reply as [string, string];
    return { partitions: Number(n), epoch: Number(epoch) };
  },
});

export const PARTITION_SCRIPTS = [partitionMapScript] as const;
