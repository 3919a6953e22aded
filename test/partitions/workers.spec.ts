/**
 * Workers of a partitioned queue on a Redis Cluster of 3 masters (docs/scale-out.md, "Leasing
 * across partitions"): one Worker leases from every partition, each job once; a group's jobs
 * run in the order added; an idle worker is woken by an add to any partition (sharded pub/sub,
 * not its safety look), and costs about what a plain queue's idle worker does; a BatchWorker
 * and several workers at once share the partitions, each worker audited on its own.
 */
import { BatchWorker, PartitionedQueue, Queue, Worker, type Job } from '../../lib/index.js';
import { useCluster } from '../support/cluster.js';
import { sleep, waitUntil } from '../support/wait.js';

const env = useCluster(3, 0); // no replicas: nothing here fails over

const PREFIX = 'pw';
let n = 0;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
});

function fresh<D>(partitions: number, extra: { groupConcurrency?: number } = {}): PartitionedQueue<D> {
  const q = new PartitionedQueue<D>(`work-${++n}`, { connection: env.client, prefix: PREFIX, partitions, ...extra });
  closers.push(() => q.close());
  return q;
}

function started<W extends { start(): void; close(): Promise<void> }>(w: W): W {
  w.start();
  closers.unshift(() => w.close());
  return w;
}

/** Commands each master ran, summed over the masters (INFO commandstats). */
async function commandsOnMasters(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const node of env.client.nodes('master')) {
    const info = (await node.info('commandstats')) as string;
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

const total = (before: Record<string, number>, after: Record<string, number>, skip: string[]) =>
  Object.entries(after).reduce((sum, [k, v]) => (skip.includes(k) ? sum : sum + v - (before[k] ?? 0)), 0);

test('one worker leases from every partition: each job once, a group in the order added', async () => {
  const q = fresh<{ g: string; k: number }>(6, { groupConcurrency: 1 });
  const seen = new Map<string, number>();
  const order = new Map<string, number[]>();
  started(
    new Worker(q, async (job: Job<{ g: string; k: number }>) => {
      seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
      if (job.data.g !== '') order.set(job.data.g, [...(order.get(job.data.g) ?? []), job.data.k]);
    }, { concurrency: 8 }),
  );
  const ids: string[] = [];
  for (let k = 0; k < 40; k++) {
    const bulk = Array.from({ length: 20 }, (_, g) => ({ data: { g: `g${g}`, k }, opts: { group: `g${g}` } }));
    ids.push(...(await q.addBulk(bulk)).map((r) => r.id));
    ids.push((await q.add({ g: '', k })).id);
  }
  await waitUntil(() => seen.size === ids.length, `all ${ids.length} jobs run`, 30_000);
  expect([...seen.values()].every((times) => times === 1)).toBe(true);
  expect(new Set(ids)).toEqual(new Set(seen.keys()));
  for (const [, ks] of order) expect(ks).toEqual(Array.from({ length: 40 }, (_, k) => k));
  // every partition had work and gave it up (the last handlers' acks may still be on their way)
  await waitUntil(async () => (await q.countsByPartition()).every((c) => c.pending + c.working === 0), 'every partition settled', 10_000);
  expect((await q.countsByPartition()).every((c) => c.completed > 0)).toBe(true);
}, 60_000);

test('an idle worker is woken by an add to any partition, well before its safety look', async () => {
  const q = fresh<number>(6);
  const done = new Map<number, number>();
  // blockMs 30 s: without a wake-up, a job would wait for the worker's next safety look
  started(new Worker(q, async (job: Job<number>) => void done.set(job.data, Date.now()), { blockMs: 30_000 }));
  await sleep(500); // the worker has looked everywhere and waits
  // one job per partition, each added while the worker is idle
  const keys = Array.from({ length: 6 }, (_, i) => Array.from({ length: 200 }, (_, k) => `key-${k}`).find((key) => q.partitionOf({ partitionKey: key }) === i)!);
  for (const [i, key] of keys.entries()) {
    const at = Date.now();
    await q.add(i, { partitionKey: key });
    await waitUntil(() => done.has(i), `job of partition ${i} run`, 5_000);
    expect(done.get(i)! - at).toBeLessThan(3_000);
    await sleep(100);
  }
}, 60_000);

test('an idle worker costs about what a plain queue idle worker costs', async () => {
  const window = 4_000;
  const skip = ['info', 'cluster|slots', 'cluster|nodes', 'cluster|shards', 'ping'];
  const idleCost = async (start: () => void) => {
    start();
    await sleep(1_000); // past the start: connections, subscriptions, first looks
    const before = await commandsOnMasters();
    await sleep(window);
    return total(before, await commandsOnMasters(), skip);
  };
  const plain = new Queue<number>(`plain-${++n}`, { connection: env.client, prefix: PREFIX });
  closers.push(() => plain.close());
  const plainCost = await idleCost(() => void started(new Worker(plain, async () => undefined, { blockMs: 1_000 })));
  await Promise.all(closers.splice(0).map((close) => close()));
  const q = fresh<number>(6);
  const partitionedCost = await idleCost(() => void started(new Worker(q, async () => undefined, { blockMs: 1_000 })));
  // a plain worker: one lease and one BLPOP a second; the partitioned one: one lease a second, no pop
  expect(plainCost).toBeGreaterThan(0);
  expect(partitionedCost).toBeLessThanOrEqual(plainCost + 2);
}, 60_000);

test('a BatchWorker and two Workers share the partitions, each doing its part', async () => {
  const q = fresh<number>(6);
  const by = { batch: 0, a: 0, b: 0 };
  const all = new Set<number>();
  started(new BatchWorker(q, async (jobs: Array<Job<number>>) => jobs.forEach((j) => (by.batch++, all.add(j.data))), { size: 10 }));
  started(new Worker(q, async (j: Job<number>) => void (by.a++, all.add(j.data)), { concurrency: 2 }));
  started(new Worker(q, async (j: Job<number>) => void (by.b++, all.add(j.data)), { concurrency: 2 }));
  for (let r = 0; r < 30; r++) {
    await q.addBulk(Array.from({ length: 40 }, (_, i) => ({ data: r * 40 + i })));
    await sleep(20);
  }
  await waitUntil(() => all.size === 1200, 'all 1200 jobs run', 30_000);
  expect(by.batch + by.a + by.b).toBe(1200);
  // audited per worker: none of them stopped leasing
  expect(by.batch).toBeGreaterThan(0);
  expect(by.a).toBeGreaterThan(0);
  expect(by.b).toBeGreaterThan(0);
}, 60_000);

test("a lease that expired is returned by sweep() and run again; the first handler's late outcome is refused", async () => {
  const q = fresh<number>(4);
  const runs: string[] = [];
  let release: () => void = () => undefined;
  const stuck = new Promise<void>((r) => (release = r));
  const outcomes: string[] = [];
  // no heartbeat: the lease expires after 500 ms while the handler still runs
  const first = started(new Worker(q, async (job: Job<number>) => {
    runs.push(`first:${job.id}`);
    await stuck;
  }, { leaseMs: 500, heartbeat: false }));
  first.events.subscribe((e) => outcomes.push(e.type));
  const { id } = await q.add(7, { partitionKey: 'k-3' });
  await waitUntil(() => runs.length === 1, 'the first run started');
  await sleep(700); // past the lease's deadline
  const swept = await q.sweep();
  expect(swept.stalled).toBe(1);
  expect((await q.counts()).pending).toBe(1);
  await first.pause();
  const second = started(new Worker(q, async (job: Job<number>) => void runs.push(`second:${job.id}`)));
  await waitUntil(() => runs.includes(`second:${id}`), 'the job run again by the second worker');
  release(); // the first handler ends now: its ack must not count
  await waitUntil(() => outcomes.some((t) => t === 'lost' || t === 'completed'), "the first worker's outcome");
  expect(outcomes).not.toContain('completed');
  await waitUntil(async () => (await q.counts()).completed === 1, 'one completion');
  const job = await q.getJob(id);
  expect(job!.state).toBe('completed');
  await second.close();
});
