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

/**
 * Which partition owns each bucket, and each partition's tag, for a queue whose number of
 * partitions went through `sizes` (the first, then each resize's: docs/scale-out.md "Changing
 * the number of partitions"). With one size `n`, bucket `b` is partition `b mod n`'s. A growth
 * from `m` to `s` gives each new partition its even share of the buckets, taken one by one from
 * the old partition that holds most above its own share (its highest bucket first): an old
 * partition only gives, a new one only receives, and every partition ends with
 * floor(1024 / s) buckets, or one more. Every object computes the same from the map's sizes.
 */
export class PartitionLayout {
  /** The number of partitions now. */
  readonly n: number;
  private readonly owners: Uint16Array;
  /** The owners before each growth, oldest first (none for a queue never resized). */
  private readonly earlier: Uint16Array[] = [];
  /** The buckets the last growth moved (none for a queue never resized). */
  readonly moved: readonly number[];

  constructor(readonly sizes: readonly number[]) {
    this.n = sizes[sizes.length - 1]!;
    const owners = new Uint16Array(PARTITION_BUCKETS);
    for (let b = 0; b < PARTITION_BUCKETS; b += 1) owners[b] = b % sizes[0]!;
    let moved: number[] = [];
    for (let k = 1; k < sizes.length; k += 1) {
      this.earlier.push(owners.slice());
      moved = grow(owners, sizes[k - 1]!, sizes[k]!);
    }
    this.owners = owners;
    this.moved = moved;
  }

  /** The size a partition's tag is computed with: the number of partitions when it was added. */
  sizeOf(i: number): number {
    return this.sizes.find((s) => i < s)!;
  }

  /** Partition `i`'s tag (partitionTag with the size it was added at). */
  tag(prefix: string, name: string, i: number): string {
    return partitionTag(prefix, name, i, this.sizeOf(i));
  }

  /** The partition that owns bucket `b`. */
  ownerOf(b: number): number {
    return this.owners[b]!;
  }

  /** The partition of a routing key. */
  partitionOfKey(key: string): number {
    return this.owners[bucketOf(key)]!;
  }

  /**
   * The partition of a scheduler (by its id): the one its id routed to with the queue's first
   * size, whatever resizes came since, so a resize never leaves two of it in two partitions.
   */
  schedulerPartition(id: string): number {
    return bucketOf(id) % this.sizes[0]!;
  }

  /** The partitions that owned a key's bucket before, other than its owner now, latest first: where a job of a chosen id may still be. */
  formerOwnersOf(key: string): number[] {
    const b = bucketOf(key);
    const out: number[] = [];
    for (let k = this.earlier.length - 1; k >= 0; k -= 1) {
      const p = this.earlier[k]![b]!;
      if (p !== this.owners[b] && !out.includes(p)) out.push(p);
    }
    return out;
  }

  /** The partitions the last growth added (empty for a queue never resized). */
  get added(): number[] {
    const from = this.sizes.length > 1 ? this.sizes[this.sizes.length - 2]! : this.n;
    return Array.from({ length: this.n - from }, (_, k) => from + k);
  }
}

/** Each partition's even share of the buckets among `n`: floor(1024 / n), plus one for the first 1024 mod n. */
function shareOfBuckets(i: number, n: number): number {
  return Math.floor(PARTITION_BUCKETS / n) + (i < PARTITION_BUCKETS % n ? 1 : 0);
}

/** Moves buckets from the `m` old partitions to the new ones up to `s` (PartitionLayout); returns the buckets moved. */
function grow(owners: Uint16Array, m: number, s: number): number[] {
  const held: number[][] = Array.from({ length: m }, () => []);
  for (let b = 0; b < PARTITION_BUCKETS; b += 1) held[owners[b]!]!.push(b);
  const moved: number[] = [];
  for (let j = m; j < s; j += 1) {
    for (let got = 0; got < shareOfBuckets(j, s); got += 1) {
      let from = 0;
      for (let p = 1; p < m; p += 1) if (held[p]!.length - shareOfBuckets(p, s) > held[from]!.length - shareOfBuckets(from, s)) from = p;
      const b = held[from]!.pop()!;
      owners[b] = j;
      moved.push(b);
    }
  }
  return moved.sort((a, b) => a - b);
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
