/**
 * Partitioned queues on a Redis Cluster of 3 masters (docs/scale-out.md, step 1 of its build):
 * the partitions spread over the masters; a job's group, partitionKey, jobId or deduplication
 * id keeps it in one partition and jobs without one are spread evenly; every job is found by
 * its id; a bulk add with a bad job writes nothing anywhere; the queue's map holds its number
 * of partitions against objects that declare another; bad options are refused before anything
 * connects.
 */
import { PartitionedQueue, PartitionsMismatchError, Queue, ValidationError, type QueueCounts } from '../../lib/index.js';
import { useCluster } from '../support/cluster.js';

const env = useCluster(3, 0); // no replicas: nothing here fails over

const PREFIX = 'pt';
let n = 0;
/** A queue of its own per test. */
const fresh = (partitions = 6) => new PartitionedQueue<{ i: number }>(`clicks-${++n}`, { connection: env.client, prefix: PREFIX, partitions });

const pendingOf = (counts: QueueCounts[]) => counts.map((c) => c.pending);

/** The masters holding keys of queue `name`'s partitions, by partition. */
async function mastersOfPartitions(name: string, partitions: number): Promise<string[]> {
  const owner: string[] = new Array<string>(partitions).fill('');
  for (const node of env.client.nodes('master')) {
    const keys = (await node.keys(`{${PREFIX}:{${name}#*`)) as string[];
    for (const key of keys) {
      const m = /#(\d+)(?:\.\d+)?\}/.exec(key); // not the map's '#}'
      if (m) owner[Number(m[1])] = `${node.options.port}`;
    }
  }
  return owner;
}

test('jobs without a key are spread evenly over the partitions', async () => {
  const pq = fresh(6);
  try {
    for (let i = 0; i < 600; i++) await pq.add({ i });
    // one producer's rotation: the same number in each partition
    expect(pendingOf(await pq.countsByPartition())).toEqual([100, 100, 100, 100, 100, 100]);
    expect((await pq.counts()).pending).toBe(600);
  } finally {
    await pq.close();
  }
}, 30_000);

test('the partitions of a queue spread evenly over the masters, whatever its name', async () => {
  // Left to the hash (tags without a salt), 'emails' fell 1/1/4 over the masters and 'events-7'
  // 2/3/1; placed over the slots (lib/core/partitions/layout.ts), every name falls 2/2/2.
  for (const name of ['orders', 'clicks', 'emails', 'events-7']) {
    const pq = new PartitionedQueue<{ i: number }>(name, { connection: env.client, prefix: PREFIX, partitions: 6 });
    try {
      for (let i = 0; i < 6; i++) {
        const key = Array.from({ length: 500 }, (_, k) => `k${k}`).find((k) => pq.partitionOf({ partitionKey: k }) === i)!;
        await pq.add({ i }, { partitionKey: key });
      }
      const owners = await mastersOfPartitions(name, 6);
      expect(owners.every((o) => o !== '')).toBe(true);
      const perMaster = new Map<string, number>();
      for (const o of owners) perMaster.set(o, (perMaster.get(o) ?? 0) + 1);
      expect([name, [...perMaster.values()]]).toEqual([name, [2, 2, 2]]);
    } finally {
      await pq.close();
    }
  }
}, 30_000);

test("a group's, a partitionKey's, a jobId's and a deduplication id's jobs stay in one partition", async () => {
  const pq = fresh(6);
  try {
    const keyed: Array<[Parameters<typeof pq.add>[1], number]> = [];
    for (let i = 0; i < 20; i++) keyed.push([{ group: 'tenant-a' }, i]);
    for (let i = 0; i < 20; i++) keyed.push([{ partitionKey: 'order-7' }, i]);
    for (const [opts, i] of keyed) await pq.add({ i }, opts);
    const a = pq.partitionOf({ group: 'tenant-a' })!;
    const k = pq.partitionOf({ partitionKey: 'order-7' })!;
    const counts = pendingOf(await pq.countsByPartition());
    if (a === k) expect(counts[a]).toBe(40);
    else expect([counts[a], counts[k]]).toEqual([20, 20]);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(40);

    // an idempotency key is checked in one place: the second add writes nothing
    expect((await pq.add({ i: 1 }, { jobId: 'pay-1' })).created).toBe(true);
    expect((await pq.add({ i: 2 }, { jobId: 'pay-1' })).created).toBe(false);
    const d1 = await pq.add({ i: 3 }, { deduplication: { id: 'mail-9' } });
    const d2 = await pq.add({ i: 4 }, { deduplication: { id: 'mail-9' } });
    expect([d1.created, d2.created, d2.deduplicated, d2.id]).toEqual([true, false, 'ignored', d1.id]);
    expect((await pq.counts()).pending).toBe(42);
    expect((await pq.getJob('pay-1'))!.data).toEqual({ i: 1 });
  } finally {
    await pq.close();
  }
}, 30_000);

test('getJob finds every job by its id: generated, chosen, and chosen but routed by its group', async () => {
  const pq = fresh(6);
  try {
    const made = await Promise.all(Array.from({ length: 30 }, (_, i) => pq.add({ i })));
    const ids = made.map((r) => r.id);
    // a generated id names its partition
    for (const id of ids) expect(id).toMatch(/^[0-5]\./);
    // chosen ids: one routed by itself, and ones whose group put them elsewhere than their id's partition
    await pq.add({ i: 100 }, { jobId: 'chosen' });
    const elsewhere = Array.from({ length: 20 }, (_, i) => `g-${i}`).find((id) => pq.partitionOf({ jobId: id }) !== pq.partitionOf({ group: 'tenant-b' }))!;
    await pq.add({ i: 101 }, { jobId: elsewhere, group: 'tenant-b' });
    const found = await Promise.all([...ids, 'chosen', elsewhere].map((id) => pq.getJob(id)));
    expect(found.map((j) => j?.data.i)).toEqual([...Array.from({ length: 30 }, (_, i) => i), 100, 101]);
    expect(await pq.getJob('never-added')).toBeNull();
    expect(await pq.getJob('3.abc.def')).toBeNull(); // shaped like a generated id, in no partition
  } finally {
    await pq.close();
  }
}, 30_000);

test('addBulk splits by partition, keeps the order of its results, and writes nothing when one job is bad', async () => {
  const pq = fresh(6);
  try {
    const jobs = Array.from({ length: 60 }, (_, i) => ({ data: { i }, opts: i % 3 === 0 ? { group: `u${i % 7}` } : i % 3 === 1 ? { partitionKey: `k${i % 5}` } : undefined }));
    const bad = jobs.map((j, i) => (i === 47 ? { data: { i }, opts: { group: 'u1', priority: 5 } } : j));
    await expect(pq.addBulk(bad)).rejects.toMatchObject({ name: 'ValidationError', field: 'jobs[47].opts' });
    const badKey = jobs.map((j, i) => (i === 13 ? { data: { i }, opts: { partitionKey: '' } } : j));
    await expect(pq.addBulk(badKey)).rejects.toMatchObject({ name: 'ValidationError', field: 'jobs[13].opts.partitionKey' });
    expect((await pq.counts()).pending).toBe(0);

    const results = await pq.addBulk(jobs);
    expect(results).toHaveLength(60);
    expect(results.every((r) => r.created)).toBe(true);
    const read = await Promise.all(results.map((r) => pq.getJob(r.id)));
    expect(read.map((j) => j!.data.i)).toEqual(jobs.map((j) => j.data.i));
    // a group's jobs went to its partition, and nowhere else
    const inPartition = pendingOf(await pq.countsByPartition());
    expect(inPartition.reduce((x, y) => x + y, 0)).toBe(60);
    const grouped = await Promise.all(results.filter((_, i) => i % 3 === 0).map((r) => pq.getJob(r.id)));
    for (const job of grouped) expect(job!.id.startsWith(`${pq.partitionOf({ group: job!.group! })}.`)).toBe(true);
  } finally {
    await pq.close();
  }
}, 30_000);

test('an object that declares another number of partitions is refused before it writes', async () => {
  const pq = fresh(6);
  const other = new PartitionedQueue<{ i: number }>(pq.name, { connection: env.client, prefix: PREFIX, partitions: 4 });
  try {
    await pq.add({ i: 1 });
    await expect(other.add({ i: 2 })).rejects.toBeInstanceOf(PartitionsMismatchError);
    await expect(other.addBulk([{ data: { i: 3 } }, { data: { i: 4 } }])).rejects.toMatchObject({ code: 'RELQ_PARTITIONS_MISMATCH', declared: 4, stored: 6 });
    await expect(other.counts()).rejects.toBeInstanceOf(PartitionsMismatchError);
    expect((await pq.counts()).pending).toBe(1);
  } finally {
    await Promise.all([pq.close(), other.close()]);
  }
}, 30_000);

test('a plain queue named like a partition never meets it', async () => {
  const pq = fresh(2);
  const plain = new Queue<{ i: number }>(`${pq.name}#0`, { connection: env.client, prefix: PREFIX });
  try {
    await plain.add({ i: 1 });
    await pq.add({ i: 2 });
    expect((await plain.counts()).pending).toBe(1);
    expect((await pq.counts()).pending).toBe(1);
  } finally {
    await Promise.all([pq.close(), plain.close()]);
  }
}, 30_000);

test('bad options are refused before anything connects', () => {
  const make = (name: string, options: object) => () => new PartitionedQueue(name, { connection: 'redis://127.0.0.1:1', ...options } as never);
  expect(make('{orders}-clicks', { partitions: 4 })).toThrow(ValidationError);
  expect(make('clicks', {})).toThrow(/partitions: must be a finite number/);
  expect(make('clicks', { partitions: 0 })).toThrow(/partitions: must be between 1 and 1024/);
  expect(make('clicks', { partitions: 1025 })).toThrow(/partitions: must be between 1 and 1024/);
  expect(make('clicks', { partitions: 2.5 })).toThrow(/whole number/);
  expect(make('clicks', { partitions: 4, bound: 10 })).toThrow(/bound: is not supported on a partitioned queue/);
  expect(make('clicks', { partitions: 4, exclusive: { consumer: true } })).toThrow(/exclusive: is not supported on a partitioned queue/);
  expect(make('clicks', { partitions: 4, limiter: { max: 3, durationMs: 1000 } })).toThrow(/limiter.max: of a queue of 4 partitions must be at least 4/);
  expect(make('clicks', { partitions: 4, limiter: { max: 4, durationMs: -1 } })).toThrow(/limiter.durationMs/);
  expect(make('clicks', { partitions: 4, globalConcurrency: 3 })).toThrow(/globalConcurrency: of a queue of 4 partitions must be 0 \(none\) or at least 4/);
  expect(make('clicks', { partitions: 4, maxLogLines: -1 })).toThrow(/maxLogLines/);
  expect(make('clicks', { partitions: 4, colour: 'red' })).toThrow(/unknown option 'colour'/);
});
