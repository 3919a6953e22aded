/**
 * The relq CLI on a partitioned queue (docs/scale-out.md): a queue with a partition map is
 * opened as one, so counts, jobs, job, pause and resume, workers and the dead-letter commands
 * cover every partition, `concurrency` sets the global concurrency in shares, and `resize`
 * grows the queue live.
 */
import { PartitionedQueue, Queue, Worker } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';
import type { CliRun } from '../support/cli-harness.js';
import { useCliBed } from './cli-bed.js';

const bed = useCliBed();
const { relq } = bed;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});

function json<T>(r: CliRun): T {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(r.stdout) as T;
}

test('counts, jobs, job, pause, resume, workers, retry-dead and concurrency over every partition', async () => {
  const prefix = uniquePrefix();
  const q = new PartitionedQueue<{ n: number; fail?: boolean }>('clicks', { connection: bed.redis.url, prefix, partitions: 4, defaults: { attempts: 1 } });
  closers.push(() => q.close());
  for (let n = 0; n < 12; n++) await q.add({ n, fail: true }); // spread: 3 per partition
  const w = new Worker(q, async (job) => {
    if (job.data.fail) throw new Error('no');
  }, { concurrency: 4, blockMs: 500 });
  w.start();
  closers.push(() => w.close());
  await waitUntil(async () => (await q.counts()).dead === 12, '12 dead', 15_000);
  for (let n = 0; n < 8; n++) await q.add({ n }, { delayMs: 60_000 });

  // listed once, as the logical queue with its partitions (not as four queues)
  const listed = json<Array<{ name: string; partitions?: number }>>(await relq(prefix, 'queues', '--json'));
  expect(listed.map((l) => [l.name, l.partitions])).toEqual([['clicks', 4]]);
  expect((await relq(prefix, 'queues')).stdout).toMatch(/clicks\s+4\s/);

  const counts = json<{ dead: number; delayed: number }>(await relq(prefix, 'counts', 'clicks', '--json'));
  expect([counts.dead, counts.delayed]).toEqual([12, 8]);
  const delayed = json<Array<{ id: string }>>(await relq(prefix, 'jobs', 'clicks', '--state', 'delayed', '--json'));
  expect(delayed.map((j) => j.id).sort()).toEqual((await q.getJobs('delayed')).map((j) => j.id).sort());
  expect(new Set(delayed.map((j) => j.id.split('.')[0])).size).toBe(4); // from every partition
  const one = json<{ id: string; state: string }>(await relq(prefix, 'job', 'clicks', delayed[5]!.id, '--json'));
  expect([one.id, one.state]).toEqual([delayed[5]!.id, 'delayed']);
  const workers = json<Array<{ pid: number }>>(await relq(prefix, 'workers', 'clicks', '--json'));
  expect(workers.map((x) => x.pid)).toEqual([process.pid]);

  expect((await relq(prefix, 'pause', 'clicks')).code).toBe(0);
  expect((await q.countsByPartition()).every((c) => c.paused)).toBe(true);
  expect((await relq(prefix, 'resume', 'clicks')).code).toBe(0);
  expect(await q.isPaused()).toBe(false);

  const retried = await relq(prefix, 'retry-dead', 'clicks', '--limit', '5', '--json');
  expect(retried.code).toBe(0);
  await waitUntil(async () => (await q.counts()).dead === 12, 'the 5 dead again', 15_000);
  expect(json<{ dead: number }>(await relq(prefix, 'counts', 'clicks', '--json')).dead).toBe(12);

  // the global concurrency in shares, one at least per partition
  const refused = await relq(prefix, 'concurrency', 'clicks', '3');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('at least 4');
  expect(json<{ globalConcurrency: number }>(await relq(prefix, 'concurrency', 'clicks', '6', '--json')).globalConcurrency).toBe(6);
  expect((await q.countsByPartition()).length).toBe(4);
  expect(await q.getGlobalConcurrency()).toBe(6);
}, 60_000);

test('resize grows a partitioned queue live; a plain queue, fewer partitions or a bad number exit 2, a missing queue 4', async () => {
  const prefix = uniquePrefix();
  const q = new PartitionedQueue<{ n: number }>('grows', { connection: bed.redis.url, prefix, partitions: 2 });
  closers.push(() => q.close());
  for (let n = 0; n < 20; n++) await q.add({ n }, { partitionKey: `k${n}` });

  for (const args of [['grows', 'x'], ['grows', '1'], ['grows', '3', '--wait-ms', 'soon']]) {
    const r = await relq(prefix, 'resize', ...args);
    expect([args, r.code]).toEqual([args, 2]);
  }
  expect((await relq(prefix, 'resize', 'nowhere', '3')).code).toBe(4);
  const flat = new Queue('flat', { connection: bed.redis.url, prefix });
  closers.push(() => flat.close());
  await flat.add({ n: 0 });
  const plain = await relq(prefix, 'resize', 'flat', '3');
  expect([plain.code, plain.stderr]).toEqual([2, expect.stringContaining("'flat' is not a partitioned queue")]);
  await q.counts();
  expect(q.partitions).toBe(2);

  // no worker: the jobs of the keys that move hold the new partitions back
  const started = await relq(prefix, 'resize', 'grows', '5', '--wait-ms', '0');
  expect(started.code).toBe(0);
  expect(started.stdout).toMatch(/'grows' has 5 partitions \(epoch 2\); the new ones wait for the old ones' jobs of the keys they took/);
  const w = new Worker(q, async () => undefined, { concurrency: 4, blockMs: 500 });
  w.start();
  closers.push(() => w.close());
  const done = json<{ queue: string; partitions: number; epoch: number; handedOver: boolean }>(await relq(prefix, 'resize', 'grows', '5', '--json'));
  expect(done).toEqual({ queue: 'grows', partitions: 5, epoch: 2, handedOver: true });
  // the object made before follows the map; the registry lists the new number; nothing was lost
  await waitUntil(async () => (await q.counts()).completed === 20, 'every job done', 15_000);
  expect((await q.countsByPartition()).length).toBe(5);
  const listed = json<Array<{ name: string; partitions?: number }>>(await relq(prefix, 'queues', '--json'));
  expect(listed.map((l) => [l.name, l.partitions]).filter(([name]) => name === 'grows')).toEqual([['grows', 5]]);
}, 60_000);
