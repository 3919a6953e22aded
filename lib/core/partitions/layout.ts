import calculateSlot from 'cluster-key-slot';

/**
 * Where the partitions of a partitioned queue live and how a key finds its partition
 * (docs/scale-out.md "Layout" and "Routing adds").
 */

/** Keys hash to this many buckets; each partition owns some of them, so there are at most this many partitions. */
export const PARTITION_BUCKETS = 1024;

/** Redis Cluster's hash slots. */
const CLUSTER_SLOTS = 16_384;
/** Salts tried for a partition's tag before giving up on its slot range (never reached: a range holds 16 slots or more). */
const MAX_SALT = 1_000_000;

/**
 * The tag of partition `i` of `n`: `{<prefix>:{<name>#<i>.<salt>}`. Redis hashes
 * `<prefix>:{<name>#<i>.<salt>`, the text up to the first '}'. The salt is the first that puts
 * that slot in the i-th of n equal ranges of the 16,384 slots, so that the partitions spread
 * evenly over the slots whatever the name: on a Cluster whose masters hold equal ranges (as
 * `redis-cli --cluster create` makes them), with n a multiple of the masters, each master holds
 * as many. Left to the hash alone, six partitions fell 4/1/1 on three masters (bench/RESULTS.md).
 * Every object computes the same tags with nothing read. No plain queue's key starts with
 * `{<prefix>:{` (its name holds braces only as one complete tag, redis/keys.ts queueTag), so a
 * partition never meets another queue's keys.
 */
export function partitionTag(prefix: string, name: string, i: number, n: number): string {
  const lo = Math.floor((i * CLUSTER_SLOTS) / n);
  const hi = Math.floor(((i + 1) * CLUSTER_SLOTS) / n);
  for (let salt = 0; salt < MAX_SALT; salt += 1) {
    const tag = `{${prefix}:{${name}#${i}.${salt}}`;
    const slot = calculateSlot(tag);
    if (slot >= lo && slot < hi) return tag;
  }
  return `{${prefix}:{${name}#${i}}`;
}

/** The partition map, a hash on a slot of its own, found without knowing the number of partitions (partition-map.lua). */
export function partitionMapKey(prefix: string, name: string): string {
  return `{${prefix}:{${name}#}:pmap`;
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
