/**
 * A partitioned queue's queue-wide operations on a Redis Cluster of 3 masters
 * (docs/scale-out.md, "Queue-wide operations"): pages of jobs and dead letters count through
 * the partitions; an operation on a job finds the partition that holds it, also a job whose
 * chosen id was routed elsewhere by its group; pause, drain, clean, dead letters, schedulers,
 * metrics, stats, workers and events cover every partition; deleting the queue frees its map.
 */
import { listQueues, PartitionedQueue, QueueClosedError, Worker, type Job, type PartitionedQueueOptions, type QueueEvent } from '../../lib/index.js';
import { useCluster } from '../support/cluster.js';
import { sleep, waitUntil } from '../support/wait.js';

const env = useCluster(3, 0); // no replicas: nothing here fails over

const PREFIX = 'pqw';
let n = 0;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
});

type Data = { i: number; fail?: boolean };

function fresh(partitions = 6, extra: Partial<PartitionedQueueOptions> = {}): PartitionedQueue<Data> {
  const q = new PartitionedQueue<Data>(`ops-${++n}`, { connection: env.client, prefix: PREFIX, partitions, ...extra });
  closers.push(() => q.close());
  return q;
}

function worker(q: PartitionedQueue<Data>, handler: (job: Job<Data>) => Promise<unknown> = async () => undefined): Worker<Data> {
  const w = new Worker<Data>(q, async (job) => {
    if (job.data.fail) throw new Error(`job ${job.data.i} fails`);
    return handler(job);
  }, { concurrency: 8, blockMs: 500 });
  w.start();
  closers.unshift(() => w.close());
  return w;
}

/** A key that routes to `partition`. */
const keyFor = (q: PartitionedQueue<Data>, partition: number, stem = 'k') =>
  Array.from({ length: 2000 }, (_, k) => `${stem}${k}`).find((k) => q.partitionOf({ partitionKey: k }) === partition)!;

test('a page of jobs counts through the partitions, in turn, in either order and over several states', async () => {
  const q = fresh(6);
  for (let i = 0; i < 60; i++) await q.add({ i }); // spread: 10 per partition
  for (let i = 60; i < 72; i++) await q.add({ i }, { delayMs: 60_000 });
  const all = await q.getJobs('pending', { start: 0, end: 999 });
  expect(all.map((j) => j.data.i).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  // partition by partition, each in its own order (FIFO here)
  const partitionOf = (id: string) => Number(id.split('.')[0]);
  expect(all.map((j) => partitionOf(j.id))).toEqual(all.map((j) => partitionOf(j.id)).sort((a, b) => a - b));
  // any page is the matching slice of the whole
  expect((await q.getJobs('pending', { start: 7, end: 31 })).map((j) => j.id)).toEqual(all.slice(7, 32).map((j) => j.id));
  expect((await q.getJobs('pending', { start: 55, end: 80 })).map((j) => j.id)).toEqual(all.slice(55).map((j) => j.id));
  // desc: the whole reversed
  const desc = await q.getJobs('pending', { start: 0, end: 999, order: 'desc' });
  expect(desc.map((j) => j.id)).toEqual([...all].reverse().map((j) => j.id));
  // several states: the pending jobs, then the delayed ones
  const both = await q.getJobs(['pending', 'delayed'], { start: 50, end: 64 });
  expect(both.map((j) => j.state)).toEqual([...Array<string>(10).fill('pending'), ...Array<string>(5).fill('delayed')]);
  await expect(q.getJobs('pending', { start: 5, end: 2 })).rejects.toThrow(/end/);
}, 30_000);

test('an operation on a job finds its partition, also for a chosen id its group sent elsewhere', async () => {
  const q = fresh(6);
  // 'mine' routes by its id to one partition; its group sends it to another
  const byId = q.partitionOf({ jobId: 'mine' })!;
  const group = keyFor(q, (byId + 3) % 6, 'g');
  expect(q.partitionOf({ group, jobId: 'mine' })).not.toBe(byId);
  await q.add({ i: 1 }, { jobId: 'mine', group, delayMs: 60_000 });
  const spread = (await q.add({ i: 2 }, { delayMs: 60_000 })).id;

  expect((await q.getJob('mine'))?.state).toBe('delayed');
  expect(await q.updateData('mine', { i: 10 })).toBe(true);
  expect((await q.getJob('mine'))?.data).toEqual({ i: 10 });
  expect(await q.changeDelay('mine', 120_000)).toBe(true);
  expect(await q.promote('mine')).toBe(true);
  expect((await q.getJob('mine'))?.state).toBe('pending');
  expect(await q.changePriority(spread, 5)).toBe(true);
  expect(await q.promote(spread)).toBe(true);
  expect((await q.getJob(spread))?.priority).toBe(5);
  expect(await q.cancel(spread)).toBe('removed');
  expect(await q.getJob(spread)).toBeNull();
  expect(await q.remove('mine')).toBe(true);
  expect(await q.getJob('mine')).toBeNull();
  // no such job anywhere: each answers as a queue does
  expect(await q.remove('nobody')).toBe(false);
  expect(await q.cancel('nobody')).toBe(false);
  expect(await q.promote('nobody')).toBe(false);
  expect(await q.clearLogs('nobody')).toBe(0);
  await expect(q.retry('nobody')).rejects.toMatchObject({ name: 'JobNotRetryableError' });
  expect((await q.counts()).pending + (await q.counts()).delayed).toBe(0);
}, 30_000);

test('pause, resume and drain cover every partition', async () => {
  const q = fresh(6);
  await q.pause();
  expect((await q.countsByPartition()).every((c) => c.paused)).toBe(true);
  expect(await q.isPaused()).toBe(true);
  const ran: number[] = [];
  worker(q, async (job) => void ran.push(job.data.i));
  for (let i = 0; i < 30; i++) await q.add({ i });
  await sleep(800);
  expect(ran).toEqual([]); // no partition leased
  await q.resume();
  await waitUntil(() => ran.length === 30, 'all 30 run after resume', 15_000);
  expect(await q.isPaused()).toBe(false);

  const d = fresh(6);
  for (let i = 0; i < 24; i++) await d.add({ i }, i % 2 === 0 ? {} : { delayMs: 60_000 });
  expect(await d.drain()).toBe(24);
  const c = await d.counts();
  expect([c.pending, c.delayed]).toEqual([0, 0]);
}, 30_000);

test('dead letters: listed, retried and purged across partitions, a filter up to its limit in all', async () => {
  const q = fresh(6, { defaults: { attempts: 1 } });
  worker(q);
  for (let i = 0; i < 24; i++) await q.add({ i, fail: true }); // 4 per partition
  await waitUntil(async () => (await q.counts()).dead === 24, '24 dead', 15_000);
  const dead = await q.listDead({ limit: 100 });
  expect(dead.map((d) => d.id).sort()).toEqual((await q.getJobs('dead', { end: 99 })).map((j) => j.id).sort());
  expect(dead).toHaveLength(24);
  expect((await q.listDead({ offset: 10, limit: 5 })).map((d) => d.id)).toEqual(dead.slice(10, 15).map((d) => d.id));
  // ids: each to the partition that holds it
  const purged = await q.purgeDead([dead[0]!.id, dead[23]!.id, 'nobody']);
  expect(purged.sort()).toEqual([dead[0]!.id, dead[23]!.id].sort());
  // a filter: 10 in all, not 10 per partition (they fail again and come back dead)
  const retried = await q.retryDead({ limit: 10 });
  expect(retried).toHaveLength(10);
  await waitUntil(async () => (await q.counts()).dead === 22, 'the 10 dead again', 15_000);
  expect((await q.clean('dead', { limit: 7 })).length).toBe(7);
  expect((await q.counts()).dead).toBe(15);
}, 30_000);

test('retry of a completed job, clean of completed jobs with one limit for the queue', async () => {
  const q = fresh(6);
  const runs = new Map<number, number>();
  worker(q, async (job) => void runs.set(job.data.i, (runs.get(job.data.i) ?? 0) + 1));
  const ids: string[] = [];
  for (let i = 0; i < 18; i++) ids.push((await q.add({ i })).id);
  await waitUntil(async () => (await q.counts()).completed === 18, '18 completed', 15_000);
  expect(await q.retry(ids[4]!)).toBe('completed');
  await waitUntil(() => runs.get(4) === 2, 'job 4 run again', 15_000);
  const cleaned = await q.clean('completed', { limit: 10 });
  expect(cleaned).toHaveLength(10);
  expect((await q.counts()).completed).toBe(8);
  expect((await q.clean('completed')).length).toBe(8);
}, 30_000);

test('a scheduler makes one job per slot for the whole queue, from the partition its id routes to', async () => {
  const q = fresh(6);
  expect(await q.upsertScheduler('hourly', { everyMs: 3_600_000 }, { data: { i: 7 } })).toBe(true);
  const per = await q.countsByPartition();
  expect(per.map((c) => c.delayed).reduce((a, b) => a + b, 0)).toBe(1);
  expect(per.findIndex((c) => c.delayed === 1)).toBe(q.partitionOf({ partitionKey: 'hourly' }));
  expect((await q.getSchedulers()).map((s) => s.id)).toEqual(['hourly']);
  const tick = await q.runSchedulers();
  expect(tick.advanced).toBe(0);
  expect(tick.nextDueAt).toBeGreaterThan(tick.now);
  expect(await q.removeScheduler('hourly')).toBe(true);
  expect((await q.counts()).delayed).toBe(0);
  expect(await q.getSchedulers()).toEqual([]);
}, 30_000);

test('metrics, stats, workers and events of every partition, merged', async () => {
  const q = fresh(6, { metrics: true, stats: true });
  const events: QueueEvent[] = [];
  const sub = q.events().subscribe((e) => events.push(e));
  closers.push(async () => sub.unsubscribe());
  worker(q, async () => sleep(5));
  for (let i = 0; i < 36; i++) await q.add({ i, fail: i < 6 }, i < 6 ? { attempts: 1 } : {});
  await waitUntil(async () => {
    const c = await q.counts();
    return c.completed === 30 && c.dead === 6;
  }, 'all 36 ended', 15_000);
  const m = await q.getMetrics();
  expect([m.total.completed, m.total.dead]).toEqual([30, 6]);
  expect(m.total.runTime.count).toBe(36);
  expect(m.total.runTime.p50).toBeGreaterThanOrEqual(4);
  const s = await q.stats();
  expect([s.enabled, s.produced.messages, s.consumed.messages]).toEqual([true, 36, 36]);
  const workers = await q.getWorkers();
  // once, though it registered in every partition it leased from
  expect(workers.map((x) => [x.pid, x.concurrency])).toEqual([[process.pid, 8]]);
  await waitUntil(() => events.filter((e) => e.type === 'completed').length === 30, '30 completed events', 10_000);
  expect(new Set(events.filter((e) => e.type === 'completed').map((e) => e.id)).size).toBe(30);
  expect(await q.getCountsPerPriority([0, 1])).toEqual({ 0: 0, 1: 0 });
}, 30_000);

test('closeQueue closes every partition; deleteQueue frees the map for another number of partitions', async () => {
  const q = fresh(6, { checkClosed: true }); // adds read the closed mark
  for (let i = 0; i < 12; i++) await q.add({ i });
  expect(await q.closeQueue()).toBe(true);
  expect(await q.isQueueClosed()).toBe(true);
  await expect(q.add({ i: 99 })).rejects.toBeInstanceOf(QueueClosedError);
  expect(await q.reopenQueue()).toBe(true);
  expect(await q.isQueueClosed()).toBe(false);
  expect(await q.getCountsPerPriority([0])).toEqual({ 0: 12 });
  const listed = async () => (await listQueues(env.client, { prefix: PREFIX })).filter((l) => l.name === q.name);
  expect(await listed()).toEqual([{ name: q.name, firstSeen: expect.any(Number), partitions: 6 }]);
  expect(await q.deleteQueue({ tombstoneMs: 1 })).toBeGreaterThan(0);
  expect(await listed()).toEqual([]);
  await sleep(20);
  const again = new PartitionedQueue<Data>(q.name, { connection: env.client, prefix: PREFIX, partitions: 3 });
  closers.push(() => again.close());
  await again.add({ i: 1 });
  expect((await again.counts()).pending).toBe(1);
}, 30_000);

test('global concurrency in shares: the fleet never holds more than the limit, raised and removed at run time', async () => {
  expect(() => fresh(4, { globalConcurrency: 3 })).toThrow(/at least 4/);
  const q = fresh(4, { globalConcurrency: 4 });
  let running = 0;
  let most = 0;
  const done = new Set<number>();
  const handler = async (job: Job<Data>) => {
    most = Math.max(most, ++running);
    await sleep(30);
    running -= 1;
    done.add(job.data.i);
  };
  worker(q, handler); // 8 slots
  worker(q, handler); // 8 more: 16 in all
  for (let i = 0; i < 60; i++) await q.add({ i });
  await waitUntil(() => done.size === 60, '60 jobs', 20_000);
  expect(most).toBeLessThanOrEqual(4); // each partition's share is 1; without shares each would allow 4, 16 at once
  expect(most).toBeGreaterThanOrEqual(2);

  await q.setGlobalConcurrency(10); // shares 3, 3, 2, 2
  expect(await q.getGlobalConcurrency()).toBe(10);
  expect((await q.queueState()).globalConcurrency).toBe(10);
  most = 0;
  for (let i = 60; i < 160; i++) await q.add({ i });
  await waitUntil(() => done.size === 160, '100 more jobs', 20_000);
  expect(most).toBeLessThanOrEqual(10);
  expect(most).toBeGreaterThan(4);

  await expect(q.setGlobalConcurrency(2)).rejects.toThrow(/at least 4/);
  expect(await q.getGlobalConcurrency()).toBe(10); // nothing written
  await q.setGlobalConcurrency(0);
  expect(await q.getGlobalConcurrency()).toBe(0);
}, 60_000);

test('a rate limit in shares: the fleet leases no more than max per window, whatever partition holds the jobs', async () => {
  const q = fresh(4, { limiter: { max: 8, durationMs: 1000 } }); // shares 2, 2, 2, 2
  const leasedAt: number[] = [];
  const handler = async () => void leasedAt.push(Date.now());
  worker(q, handler);
  worker(q, handler); // 16 slots: the limit, not the slots, holds them back
  await q.addBulk(Array.from({ length: 40 }, (_, i) => ({ data: { i } })));
  await waitUntil(() => leasedAt.length === 40, '40 jobs', 30_000);
  expect((await q.queueState()).limiter).toEqual({ max: 8, durationMs: 1000 }); // the shares added up
  const first = Math.min(...leasedAt);
  // every partition's first window opened with its first lease, about at `first`
  expect(leasedAt.filter((t) => t < first + 800).length).toBeLessThanOrEqual(8); // without shares: 32
  // 10 jobs a partition at 2 a window: its last in its fifth window
  expect(Math.max(...leasedAt) - first).toBeGreaterThanOrEqual(3800);
}, 60_000);


test("a job's children are added to its partition, run there, and their results reach it", async () => {
  type Step = { step: 'split' | 'join' | 'child'; n: number };
  const q = new PartitionedQueue<Step, number>(`flows-${++n}`, { connection: env.client, prefix: PREFIX, partitions: 6 });
  closers.push(() => q.close());
  const w = new Worker<Step, number>(q, async (job) => {
    if (job.data.step === 'child') return job.data.n * 10;
    if (job.data.step === 'split') {
      await job.addChildren([1, 2, 3].map((k) => ({ data: { step: 'child' as const, n: k }, opts: { jobId: `${job.id}:${k}` } })));
      await job.updateData({ ...job.data, step: 'join' });
      await job.waitForChildren();
      return 0;
    }
    const results = await job.childrenResults<number>();
    return Object.values(results).reduce((a, b) => a + b, 0);
  }, { concurrency: 4 });
  closers.unshift(() => w.close());
  const parents = await Promise.all([1, 2, 3, 4].map((k) => q.add({ step: 'split', n: k })));
  for (const p of parents) expect(await q.waitForResult(p.id, { timeoutMs: 15_000 })).toBe(60);
  for (const p of parents) expect(await q.getJob(`${p.id}:2`)).toMatchObject({ state: 'completed', result: 20, parent: { id: p.id } });
  // each child in its parent's partition (their chosen ids would route elsewhere): 1 + 3 jobs per parent
  const completed = (await q.countsByPartition()).map((c) => c.completed);
  expect(completed.reduce((a, b) => a + b, 0)).toBe(16);
  expect(completed.every((c) => c % 4 === 0)).toBe(true);
}, 30_000);
