/**
 * Growing a partitioned queue while it runs (docs/scale-out.md "Changing the number of
 * partitions"), on a Redis Cluster of 3 masters: no job is lost, a key that moves keeps its
 * order (its new jobs wait in the new partition until its old ones end), every object of the
 * queue follows the map (producers refused by the fence, workers told on their wake-up
 * channel, each worker process checked on its own), an idempotency key holds across the move,
 * and what a resize cannot do is refused before anything is written.
 */
import { PartitionedQueue, PartitionsMismatchError, ResizeRefusedError, ValidationError, Worker, type Job, type QueueEvent } from '../../lib/index.js';
import { PartitionLayout } from '../../lib/core/partitions/layout.js';
import { useCluster } from '../support/cluster.js';
import { useEngineChildren } from '../support/engine-child.js';
import { sleep, waitUntil } from '../support/wait.js';

const env = useCluster(3, 1);
const children = useEngineChildren();

const PREFIX = 'prs';
let n = 0;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
});

type Data = { i: number; key?: string; seq?: number };

function open(name: string, partitions: number, extra: { globalConcurrency?: number; groupConcurrency?: number } = {}): PartitionedQueue<Data> {
  const q = new PartitionedQueue<Data>(name, { connection: env.client, prefix: PREFIX, partitions, ...extra });
  closers.push(() => q.close());
  return q;
}

function worker(q: PartitionedQueue<Data>, handler: (job: Job<Data>) => Promise<unknown>, concurrency = 8): Worker<Data> {
  const w = new Worker<Data>(q, handler, { concurrency, blockMs: 500 });
  w.start();
  closers.unshift(() => w.close());
  return w;
}

/** A key whose bucket goes from an old partition to partition `to` when the queue grows from `sizes` to `next`. */
function movingKey(sizes: number[], next: number, to: number, stem = 'k'): string {
  const before = new PartitionLayout(sizes);
  const after = new PartitionLayout([...sizes, next]);
  return Array.from({ length: 5000 }, (_, k) => `${stem}${k}`).find((k) => after.partitionOfKey(k) === to && before.partitionOfKey(k) !== to)!;
}

test("a moved group's new jobs wait in the new partition until its jobs in the old one have ended", async () => {
  const name = `grow-${++n}`;
  const producer = open(name, 2, { groupConcurrency: 1 });
  const consumer = open(name, 2, { groupConcurrency: 1 });
  const admin = open(name, 2, { groupConcurrency: 1 });
  const group = movingKey([2], 3, 2, 'g');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started: number[] = [];
  const ended: number[] = [];
  worker(consumer, async (job) => {
    started.push(job.data.i);
    if (job.data.i === 0) await gate;
    ended.push(job.data.i);
  }, 4);
  await producer.add({ i: 0 }, { group });
  await waitUntil(() => started.includes(0), 'job 0 running in the old partition', 10_000);
  await producer.add({ i: 1 }, { group }); // behind job 0: one job at a time per group

  // the resize starts; job 0 is still running, so its handover cannot end yet
  expect(await admin.resize(3, { waitMs: 0 })).toEqual({ partitions: 3, epoch: 2, handedOver: false });
  // the producer still has the old map: the old partition refuses its add, and it routes anew
  const third = await producer.add({ i: 2 }, { group });
  expect(third.id.startsWith('2.')).toBe(true);
  expect(producer.partitions).toBe(3);
  await waitUntil(() => consumer.partitions === 3, 'the consumer follows the map', 10_000);
  await sleep(600);
  expect(started).toEqual([0]); // job 2 is held: its group's older jobs have not ended
  expect((await admin.countsByPartition())[2]).toMatchObject({ pending: 1, working: 0 });

  release();
  // the resize call is gone: another object's sweeps carry the handover to its end
  await waitUntil(async () => {
    await consumer.sweep();
    return ended.length === 3;
  }, 'every job ended, the handover driven by sweeps', 10_000, 100);
  expect(await admin.resize(3)).toEqual({ partitions: 3, epoch: 2, handedOver: true });
  expect(started).toEqual([0, 1, 2]);
  expect(ended).toEqual([0, 1, 2]);
});

test('a resize mid-run loses no job, keeps each key in order, and the new partitions take their share', async () => {
  const name = `grow-${++n}`;
  const producer = open(name, 3);
  const consumer = open(name, 3);
  const admin = open(name, 3);
  const keys = Array.from({ length: 24 }, (_, k) => `key-${k}`);
  const seqOf = new Map(keys.map((k) => [k, 0]));
  const runs = new Map<string, number>();
  const startedSeqs = new Map<string, number[]>();
  const completedIn = new Set<number>();
  const events: QueueEvent[] = [];
  const sub = admin.events().subscribe((e) => events.push(e));
  closers.push(async () => sub.unsubscribe());
  await admin.eventsReady();
  worker(consumer, async (job) => {
    runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    if (job.data.key !== undefined) startedSeqs.set(job.data.key, [...(startedSeqs.get(job.data.key) ?? []), job.data.seq!]);
    await sleep(4); // slower than the producer: a backlog waits in the old partitions when the resize comes
  }, 4);

  const added: string[] = [];
  let adding = true;
  const produce = (async () => {
    for (let i = 0; adding; i += 1) {
      const key = keys[i % keys.length]!;
      let r;
      if (i % 5 !== 4) {
        const seq = seqOf.get(key)! + 1;
        seqOf.set(key, seq);
        r = await producer.add({ i, key, seq }, { partitionKey: key });
      } else {
        r = await producer.add({ i }); // spread
      }
      added.push(r.id);
    }
  })();
  await waitUntil(() => runs.size > 100 && added.length > runs.size + 300, 'a run under way, with a backlog', 20_000);
  const resized = await admin.resize(5);
  expect(resized).toMatchObject({ partitions: 5, handedOver: true });
  await sleep(1500);
  adding = false;
  await produce;
  await waitUntil(async () => (await admin.counts()).completed === added.length, 'every job completed', 30_000);

  // every job ran once, none lost, none twice
  expect(added.length).toBeGreaterThan(400);
  expect(new Set(added).size).toBe(added.length);
  expect([...runs.values()].filter((r) => r !== 1)).toEqual([]);
  expect([...runs.keys()].sort()).toEqual([...added].sort());
  // each key's jobs started in the order they were added, across its move
  for (const key of keys) {
    const seqs = startedSeqs.get(key) ?? [];
    expect([key, seqs]).toEqual([key, Array.from({ length: seqOf.get(key)! }, (_, k) => k + 1)]);
  }
  // the new partitions took work, and every object knows them
  const counts = await admin.countsByPartition();
  expect(counts).toHaveLength(5);
  expect(counts[3]!.completed + counts[4]!.completed).toBeGreaterThan(0);
  expect([producer.partitions, consumer.partitions]).toEqual([5, 5]);
  // events() opened before the resize follows the new partitions
  for (const id of added) if (id.startsWith('3.') || id.startsWith('4.')) completedIn.add(Number(id[0]));
  expect(completedIn.size).toBeGreaterThan(0);
  await waitUntil(() => events.some((e) => e.type === 'completed' && /^[34]\./.test(e.id ?? '')), 'events of a new partition', 5000);
});

test('objects declared before or after a resize follow the map; a number it never had is refused', async () => {
  const name = `grow-${++n}`;
  const first = open(name, 3);
  for (let i = 0; i < 30; i++) await first.add({ i });
  expect(await first.resize(5)).toMatchObject({ partitions: 5, handedOver: true });
  await first.add({ i: 30 }, { partitionKey: movingKey([3], 5, 4) });
  const expected = (await first.countsByPartition()).map((c) => c.pending);

  const before = open(name, 3); // a deployment still declaring the first number
  const after = open(name, 5); // one declaring the new number
  expect((await before.countsByPartition()).map((c) => c.pending)).toEqual(expected);
  expect((await after.countsByPartition()).map((c) => c.pending)).toEqual(expected);
  expect([before.partitions, after.partitions]).toEqual([5, 5]);
  await expect(open(name, 4).counts()).rejects.toBeInstanceOf(PartitionsMismatchError);
  // a worker whose object makes no other call still leases from the map's partitions
  const ran: string[] = [];
  worker(open(name, 5), async (job) => void ran.push(job.id));
  await waitUntil(() => ran.length === 31, 'every job run by a worker declared with the new number', 10_000);
  expect([...new Set(ran.map((id) => id.split('.')[0]))].sort()).toEqual(['0', '1', '2', '4']); // the spread jobs in the first three, the keyed one in the fifth
  // routing is the same whatever the object declared
  const key = movingKey([3], 5, 3, 'p');
  expect([first.partitionOf({ partitionKey: key }), before.partitionOf({ partitionKey: key }), after.partitionOf({ partitionKey: key })]).toEqual([3, 3, 3]);
});

test('what a resize cannot do is refused before anything is written', async () => {
  const name = `grow-${++n}`;
  const q = open(name, 3);
  await q.add({ i: 0 });
  await expect(q.resize(2)).rejects.toBeInstanceOf(ValidationError);
  await expect(q.resize(1025)).rejects.toBeInstanceOf(ValidationError);
  await expect(q.resize(4, { waitMs: -1 })).rejects.toBeInstanceOf(ValidationError);
  expect(await q.resize(3)).toEqual({ partitions: 3, epoch: 1, handedOver: true }); // nothing to do

  // a handover under way: another number waits for it (a job of a moved group never ends meanwhile)
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  closers.unshift(async () => release());
  const held = open(name, 3);
  worker(held, () => gate, 1);
  await held.add({ i: 1 }, { group: movingKey([3], 4, 3, 'h') });
  await waitUntil(async () => (await q.counts()).working === 1, 'a job running', 10_000);
  expect(await q.resize(4, { waitMs: 0 })).toMatchObject({ partitions: 4, handedOver: false });
  await expect(q.resize(5)).rejects.toBeInstanceOf(ResizeRefusedError);
  expect(q.partitions).toBe(4);

  // shares per partition do not follow a resize yet
  const shared = open(`grow-${++n}`, 3, { globalConcurrency: 6 });
  await shared.add({ i: 0 });
  await expect(shared.resize(4)).rejects.toBeInstanceOf(ResizeRefusedError);
  expect((await shared.countsByPartition()).length).toBe(3);
});

test('a chosen job id holds across a resize: the partition its key left still answers for it', async () => {
  const name = `grow-${++n}`;
  const q = open(name, 2);
  const id = movingKey([2], 4, 3, 'order-');
  expect(await q.add({ i: 0 }, { jobId: id })).toEqual({ id, created: true });
  expect(await q.resize(4)).toMatchObject({ partitions: 4, handedOver: true });
  expect(await q.add({ i: 1 }, { jobId: id })).toEqual({ id, created: false });
  expect(await q.addBulk([{ data: { i: 2 }, opts: { jobId: id } }, { data: { i: 3 } }])).toEqual([{ id, created: false }, expect.objectContaining({ created: true })]);
  expect((await q.counts()).pending).toBe(2);
  expect((await q.getJob(id))?.data).toEqual({ i: 0 });
});

test('every worker process follows the resize and leases from the new partitions', async () => {
  const name = `grow-${++n}`;
  const q = open(name, 3);
  const nodes = JSON.stringify(env.cluster.nodes.map((x) => ({ host: x.host, port: x.port })));
  const procs = ['a', 'b', 'c'].map((tag) =>
    children.fork('test/partitions/fixtures/partition-worker.mjs', { NODES: nodes, PREFIX, QUEUE: name, PARTITIONS: 3, TAG: tag }),
  );
  await Promise.all(procs.map((p) => p.waitFor((m) => m.type === 'ready')));
  let adding = true;
  let added = 0;
  const produce = (async () => {
    while (adding) {
      await q.addBulk(Array.from({ length: 20 }, () => ({ data: { i: added++ } })));
      await sleep(20);
    }
  })();
  await waitUntil(() => procs.every((p) => p.messages.some((m) => m.type === 'ran')), 'each process working', 15_000);
  expect(await q.resize(6)).toMatchObject({ partitions: 6, handedOver: true });
  // each process on its own: it knows six partitions and ran jobs of the new ones
  const fromNew = (tag: string) => procs.find((_, k) => 'abc'[k] === tag)!.messages.filter((m) => m.type === 'ran' && Number(String(m.id).split('.')[0]) >= 3);
  await waitUntil(() => ['a', 'b', 'c'].every((tag) => fromNew(tag).length >= 3), 'each process leasing from the new partitions', 20_000, 50);
  for (const tag of ['a', 'b', 'c']) expect([tag, fromNew(tag).every((m) => m.partitions === 6)]).toEqual([tag, true]);
  adding = false;
  await produce;
  await waitUntil(async () => (await q.counts()).completed === added, 'every job done', 20_000);
  const ran = procs.flatMap((p) => p.messages.filter((m) => m.type === 'ran').map((m) => String(m.id)));
  expect(ran.length).toBe(added);
  expect(new Set(ran).size).toBe(added);
  for (const p of procs) p.proc.send({ type: 'close' });
  await Promise.all(procs.map((p) => p.exited));
}, 60_000);
