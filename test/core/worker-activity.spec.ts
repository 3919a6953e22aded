/**
 * The worker events of a running job: 'active' when a handler starts it, 'progress' when its
 * progress was stored, from Worker and BatchWorker alike, on `activity`; `events` carries neither.
 */
import { BatchWorker, Queue, Worker, type WorkerEvent } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

let redis: TestRedis;
const closers: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});
afterAll(async () => {
  await redis?.stop();
});

function open(): Queue<string, string> {
  const q = new Queue<string, string>('activity', { connection: redis.url, prefix: uniquePrefix() });
  closers.push(() => q.close());
  return q;
}

const describeEvent = (e: WorkerEvent<string, unknown>) =>
  e.type === 'active' ? `active ${e.job.data}` : e.type === 'progress' ? `progress ${e.job.data} ${JSON.stringify(e.progress)}` : e.type === 'completed' ? `completed ${e.job.data}` : e.type;

test("Worker: 'active' before the handler runs, 'progress' once stored, then the outcome; `events` has only the outcome", async () => {
  const q = open();
  const order: string[] = [];
  const all: string[] = [];
  const outcomes: string[] = [];
  const w = new Worker(q, async (job) => {
    order.push(`handler ${job.data}`);
    expect(await job.updateProgress({ pct: 50 })).toBe(true);
    return job.data.toUpperCase();
  }, { blockMs: 100, autostart: false });
  closers.push(() => w.close());
  w.activity.subscribe((e) => {
    all.push(describeEvent(e));
    if (e.type === 'active') order.push(`active ${e.job.data}`);
  });
  w.events.subscribe((e) => {
    if (e.type === 'drained') return; // the loop's, not a job's (test/core/drained.spec.ts)
    all.push(describeEvent(e));
    outcomes.push(e.type);
  });
  w.start();
  await q.add('a');
  await waitUntil(() => all.includes('completed a'), 'the job completed');
  expect(all).toEqual(['active a', 'progress a {"pct":50}', 'completed a']);
  expect(order).toEqual(['active a', 'handler a']);
  expect(outcomes).toEqual(['completed']);
});

test("Worker: progress refused for a stale lease is not reported", async () => {
  const q = open();
  const all: string[] = [];
  const w = new Worker(q, async (job) => {
    expect(await q.remove(job.id, { force: true })).toBe(true); // its lease goes stale
    expect(await job.updateProgress(10)).toBe(false);
    return 'x';
  }, { blockMs: 100, autostart: false });
  closers.push(() => w.close());
  w.events.subscribe((e) => all.push(e.type));
  w.activity.subscribe((e) => all.push(e.type));
  w.start();
  await q.add('b');
  await waitUntil(() => all.includes('lost'), 'the lost lease');
  expect(all).not.toContain('progress');
});

test("BatchWorker: 'active' for each job of a batch, 'progress' of each", async () => {
  const q = open();
  const all: string[] = [];
  await q.addBulk([{ data: 'x' }, { data: 'y' }]);
  const w = new BatchWorker(q, async (jobs) => {
    for (const job of jobs) await job.updateProgress(1);
  }, { size: 2, waitMs: 200, blockMs: 100, autostart: false });
  closers.push(() => w.close());
  w.events.subscribe((e) => all.push(describeEvent(e)));
  w.activity.subscribe((e) => all.push(describeEvent(e)));
  w.start();
  await waitUntil(() => all.filter((e) => e.startsWith('completed')).length === 2, 'both jobs completed');
  expect(all.slice(0, 4)).toEqual(['active x', 'active y', 'progress x 1', 'progress y 1']);
});
