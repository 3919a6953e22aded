import calculateSlot from 'cluster-key-slot';

/**
 * Where the partitions of a partitioned queue live and how a key finds its partition
 * (docs/scale-out.md "Layout" and "Routing adds").
 */

/** Keys hash to this many buckets; each partition owns some of them, so there are at most this many partitions. */
export const PARTITION_BUCKETS = 1024;

/**
 * The tag of partition `i`: `{<prefix>:{<name>#<i>}`. Redis hashes `<prefix>:{<name>#<i>`, the
 * text up to the first '}', so each partition has a slot of its own. No plain queue's key starts
 * with `{<prefix>:{` (its name holds braces only as one complete tag, redis/keys.ts queueTag),
 * so a partition never meets another queue's keys.
 */
export function partitionTag(prefix: string, name: string, i: number): string {
  return `{${prefix}:{${name}#${i}}`;
}

/** The partition map, a hash on partition 0's slot (partition-map.lua). */
export function partitionMapKey(prefix: string, name: string): string {
  return `${partitionTag(prefix, name, 0)}:pmap`;
}

/**
 * The bucket of a routing key: its CRC16 (Redis Cluster's, from ioredis's cluster-key-slot)
 * modulo the buckets. Every '{' is read as '(' first, so that a hash tag in the key does not
 * cut it short: the whole key decides.
 */
export function bucketOf(key: string): number {
  return calculateSlot(key.includes('{') ? key.replaceAll('{', '(') : key) % PARTITION_BUCKETS;
}

/** The partition of a routing key among `n` (no resize under way: bucket mod n). */
export function partitionOfKey(key: string, n: number): number {
  return bucketOf(key) % n;
}

/** A job id made by a partition's producer: `<partition>.<instance>.<counter>` (adds/ids.ts). */
const GENERATED_ID = /^(\d{1,4})\.[0-9a-z]+\.[0-9a-z]+$/;

/** The partition a generated id names; undefined for an id a caller chose, or out of range. */
export function partitionOfGeneratedId(id: string, n: number): number | undefined {
  const m = GENERATED_ID.exec(id);
  if (!m) return undefined;
  const i = Number(m[1]);
  return i < n ? i : undefined;
}
