/**
 * A partitioned queue on the dashboard and in RelqMetrics, on a Cluster of 3 masters: the
 * logical queue, its counts added up over the partitions with the breakdown beside them, its
 * jobs paged across the partitions, an action on every partition, and its gauges.
 */
import { Registry } from 'prom-client';
import { PartitionedQueue, Worker } from '../../lib/index.js';
import type { JobList, QueueOverview } from '../../lib/dashboard/index.js';
import { RelqMetrics } from '../../lib/metrics/index.js';
import { useCluster } from '../support/cluster.js';
import { waitUntil } from '../support/wait.js';
import { act, startDashboard, type DashboardServer } from '../dashboard/dashboard-server.js';
import { parseExposition } from '../observability/exposition.js';

const env = useCluster(3, 0);
const closers: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function fresh(name: string): PartitionedQueue<{ i: number }> {
  const q = new PartitionedQueue<{ i: number }>(name, { connection: env.client, prefix: 'pobs', partitions: 4 });
  closers.push(() => q.close());
  return q;
}

async function json<T>(res: Promise<Response>): Promise<T> {
  const r = await res;
  expect(r.status).toBe(200);
  return (await r.json()) as T;
}

test('the dashboard shows the logical queue with a breakdown per partition, pages its jobs and acts on every partition', async () => {
  const q = fresh('board');
  await q.addBulk(Array.from({ length: 12 }, (_, i) => ({ data: { i } })));
  await q.add({ i: 99 }, { delayMs: 60_000 });
  const s: DashboardServer = await startDashboard({ queues: [q], guard: () => true });
  closers.push(() => s.close());

  const { queues } = await json<{ queues: QueueOverview[] }>(fetch(`${s.url}api/queues`));
  expect(queues).toHaveLength(1);
  const [o] = queues;
  expect(o).toMatchObject({ name: 'board', counts: { pending: 12, delayed: 1 } });
  expect(o!.partitions).toHaveLength(4);
  expect(o!.partitions!.reduce((n, p) => n + p.pending, 0)).toBe(12);
  expect(o!.partitions!.filter((p) => p.pending > 0).length).toBeGreaterThan(1); // spread, not all in one

  const page = await json<JobList>(fetch(`${s.url}api/queues/board/jobs?state=pending&start=0&end=19`));
  expect(page.jobs.map((j) => j.id).sort()).toEqual((await q.getJobs('pending', { end: 19 })).map((j) => j.id).sort());
  expect(page.jobs).toHaveLength(12);

  expect((await act(`${s.url}api/queues/board/pause`)).status).toBe(200);
  expect((await q.countsByPartition()).every((c) => c.paused)).toBe(true);
  const one = page.jobs[5]!.id;
  expect(await json<{ removed: boolean }>(act(`${s.url}api/queues/board/jobs/${encodeURIComponent(one)}/remove`))).toEqual({ removed: true });
  expect(await q.getJob(one)).toBeNull();
}, 30_000);

test('RelqMetrics reads the gauges of the logical queue', async () => {
  const q = fresh('gauged');
  const m = new RelqMetrics({ registry: new Registry(), queues: [q] });
  closers.push(() => m.close());
  await q.addBulk(Array.from({ length: 9 }, (_, i) => ({ data: { i } })));
  const x = parseExposition(await m.registry.metrics());
  expect(x.value('relq_queue_jobs', { queue: 'gauged', state: 'pending' })).toBe(9);
  const w = new Worker(q, async () => undefined, { concurrency: 4 });
  closers.push(() => w.close());
  await waitUntil(async () => (await q.counts()).completed === 9, 'the jobs to complete', 15_000);
  const y = parseExposition(await m.registry.metrics());
  expect(y.value('relq_queue_jobs', { queue: 'gauged', state: 'completed' })).toBe(9);
  expect(y.value('relq_jobs_completed_total', { queue: 'gauged' })).toBe(9);
}, 30_000);
