/**
 * queue.getWorkers() on a Redis Cluster: the registrations carried by lease and heartbeat
 * calls, the reads, the sweep's pruning and deleteQueue touch only the queue's slot, for
 * queues on every master.
 */
import { BatchWorker, Queue, Worker } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { waitUntil } from '../support/wait.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
}, 60_000);
afterAll(() => cluster?.stop());

// Names whose slots fall on all three masters (checked below).
const NAMES = ['wq-0', 'wq-1', 'wq-3', 'wq-4', 'wq-7'];

test('workers are listed, closed ones leave, and deleteQueue removes the entries, for queues on every master', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  const queues = NAMES.map((name) => new Queue<number, number>(name, { connection: client }));
  const workers = queues.flatMap((q) => [
    new Worker<number, number>(q, (job) => job.data, { concurrency: 2, appName: `${q.name}-w`, workerTtlMs: 2000 }),
    new BatchWorker<number, number>(q, () => undefined, { size: 3, workerTtlMs: 2000 }),
  ]);
  try {
    for (const q of queues) await q.addBulk([{ data: 1 }, { data: 2 }]);
    await waitUntil(async () => (await Promise.all(queues.map((q) => q.getWorkers()))).every((l) => l.length === 2), 'two workers on each queue', 20_000);
    for (const q of queues) expect((await q.getWorkers()).map((w) => w.appName ?? '-').sort()).toEqual(['-', `${q.name}-w`]);
    await Promise.all(workers.filter((w) => w instanceof BatchWorker).map((w) => w.close()));
    for (const q of queues) expect((await q.getWorkers()).map((w) => w.appName)).toEqual([`${q.name}-w`]);
    await Promise.all(workers.map((w) => w.close()));
    for (const q of queues) expect(await q.getWorkers()).toEqual([]);
    for (const q of queues) await q.sweep();
    // a worker stopped without leaving (its queue deleted under it) leaves no key behind
    const q0 = queues[0]!;
    const w0 = new Worker(q0, async () => undefined, { workerTtlMs: 2000 });
    await waitUntil(async () => (await q0.getWorkers()).length === 1, 'listed again', 10_000);
    await q0.deleteQueue({ tombstoneMs: 1000 });
    await waitUntil(() => !w0.isRunning, 'the worker stopped', 10_000);
    expect(await client.exists(q0.keys.derived.workers, q0.keys.derived.workerInfo)).toBe(0);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    for (const q of queues) await q.close();
  }
}, 60_000);
