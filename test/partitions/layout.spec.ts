/**
 * Where keys go as a partitioned queue grows (lib/core/partitions/layout.ts, docs/scale-out.md
 * "Changing the number of partitions"): a queue never resized routes as it always did; a
 * growth moves buckets only from old partitions to new ones, evenly; every object computes
 * the same from the map's sizes. Pure: no Redis.
 */
import fc from 'fast-check';
import { bucketOf, PARTITION_BUCKETS, partitionTag, PartitionLayout } from '../../lib/core/partitions/layout.js';

const shareOf = (i: number, n: number) => Math.floor(PARTITION_BUCKETS / n) + (i < PARTITION_BUCKETS % n ? 1 : 0);

function ownersOf(layout: PartitionLayout): number[] {
  return Array.from({ length: PARTITION_BUCKETS }, (_, b) => layout.ownerOf(b));
}

/** Sizes that only grow: a first size, then up to four growths. */
const growingSizes = fc
  .tuple(fc.integer({ min: 1, max: 40 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }))
  .map(([first, steps]) => steps.reduce((sizes, step) => [...sizes, sizes[sizes.length - 1]! + step], [first]));

test('a queue never resized routes bucket b to partition b mod n, as before resizes existed', () => {
  for (let n = 1; n <= 64; n += 1) {
    const layout = new PartitionLayout([n]);
    expect(ownersOf(layout).every((owner, b) => owner === b % n)).toBe(true);
    expect(layout.moved).toEqual([]);
    expect(layout.added).toEqual([]);
  }
});

test('a growth moves buckets only from old partitions to new ones, and leaves every partition its even share', () => {
  fc.assert(
    fc.property(growingSizes, (sizes) => {
      const before = new PartitionLayout(sizes.slice(0, -1));
      const after = new PartitionLayout(sizes);
      const m = before.n;
      const s = after.n;
      const was = ownersOf(before);
      const now = ownersOf(after);
      const moved = now.flatMap((owner, b) => (owner === was[b] ? [] : [b]));
      expect(moved.filter((b) => now[b]! < m)).toEqual([]); // a bucket that moves goes to a new partition
      expect(after.moved).toEqual(moved);
      const counts = new Array<number>(s).fill(0);
      for (const owner of now) counts[owner]! += 1;
      expect(counts).toEqual(Array.from({ length: s }, (_, i) => shareOf(i, s)));
      expect(after.added).toEqual(Array.from({ length: s - m }, (_, k) => m + k));
    }),
    { numRuns: 200 },
  );
});

test('tags: the first partitions keep the tags of the queue as made, and every partition has its own', () => {
  const layout = new PartitionLayout([3, 5, 8]);
  expect([0, 1, 2].map((i) => layout.tag('p', 'q', i))).toEqual([0, 1, 2].map((i) => partitionTag('p', 'q', i, 3)));
  expect([3, 4].map((i) => layout.tag('p', 'q', i))).toEqual([3, 4].map((i) => partitionTag('p', 'q', i, 5)));
  expect([5, 6, 7].map((i) => layout.tag('p', 'q', i))).toEqual([5, 6, 7].map((i) => partitionTag('p', 'q', i, 8)));
  expect(new Set(Array.from({ length: 8 }, (_, i) => layout.tag('p', 'q', i))).size).toBe(8);
});

test('a key finds the partitions it lived in before, latest first, and a scheduler never moves', () => {
  const layout = new PartitionLayout([2, 3, 7]);
  const keys = Array.from({ length: 3000 }, (_, k) => `key-${k}`);
  const stages = [new PartitionLayout([2]), new PartitionLayout([2, 3]), layout];
  const wrong = keys.filter((key) => {
    const b = bucketOf(key);
    const history = stages.map((l) => l.ownerOf(b));
    const expected = [history[1]!, history[0]!].filter((p, k, all) => p !== history[2] && all.indexOf(p) === k);
    return (
      JSON.stringify(layout.formerOwnersOf(key)) !== JSON.stringify(expected) || layout.partitionOfKey(key) !== history[2] || layout.schedulerPartition(key) !== b % 2
    );
  });
  expect(wrong).toEqual([]);
  // some keys moved twice, some once, most stayed
  expect(keys.some((k) => layout.formerOwnersOf(k).length === 2)).toBe(true);
  expect(keys.some((k) => layout.formerOwnersOf(k).length === 0)).toBe(true);
});
