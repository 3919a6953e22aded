/**
 * Parent/child flows on a real Redis, through the public API: a parent waits until its
 * children completed, reads their results, fails with a child that dies (or goes on without
 * it), goes with its unfinished children when removed; stale leases and replayed settles
 * change nothing twice.
 */
import { FlowJobExistsError, QueueClosedError, QueueFullError, ValidationError, Worker, type FlowJob, type Job, type Lease, type Queue } from '../../lib/index.js';
import { internalsOf } from '../../lib/core/queue/internals.js';
import { ackItem } from '../../lib/core/settles/settle-items.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';
import { keyContent } from '../support/key-read.js';

const res = useRedis();

async function leaseOne<D>(q: Queue<D, unknown>, id?: string, leaseMs = 30_000): Promise<Lease<D>> {
  const [l] = await q.lease({ leaseMs });
  expect(l).toBeDefined();
  if (id !== undefined) expect(l!.job.id).toBe(id);
  return l!;
}

/** Every key of the queue with its type and content, to compare before and after. */
async function snapshot(q: Queue<any, any>): Promise<Record<string, string>> {
  const c = res.client();
  const keys = (await c.keys(`${q.keys.tag}*`)).filter((k) => !k.endsWith(':listeners')).sort();
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = await keyContent(c, k);
  return out;
}

test('a two-level flow: the parent waits, then runs once both children completed, and reads their results', async () => {
  const q = res.queue<string, string>('flow2');
  const flow = await q.addFlow({ data: 'parent', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b', priority: 5 } }] });
  expect(flow).toEqual({ id: 'p', created: true, children: [{ id: 'a', created: true, children: [] }, { id: 'b', created: true, children: [] }] });
  expect(await q.counts()).toMatchObject({ pending: 2, waitingChildren: 1 });
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', data: 'parent', children: { unfinished: 2, results: {} } });
  expect((await q.getJobs('waiting-children')).map((j) => j.id)).toEqual(['p']);

  const b = await leaseOne(q, 'b'); // priority first
  expect(await q.ack(b, 'B')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: { b: 'B' } } });
  const a = await leaseOne(q, 'a');
  expect(await q.ack(a)).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 1, waitingChildren: 0 });
  const p = await leaseOne(q, 'p');
  expect(await q.childrenResults('p')).toEqual({ a: null, b: 'B' });
  expect(await q.ack(p, 'done')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'completed', result: 'done', children: { unfinished: 0, results: { a: null, b: 'B' } } });
});

test('a three-level flow runs leaves, then middles, then the root, each reading its children through job.childrenResults()', async () => {
  const q = res.queue<string, string>('flow3');
  const order: string[] = [];
  const seen: Record<string, Record<string, string>> = {};
  res.worker(
    new Worker<string, string>(
      q,
      async (job: Job<string>) => {
        order.push(job.data);
        seen[job.data] = await job.childrenResults<string>();
        return `${job.data}!`;
      },
      { concurrency: 4 },
    ),
  );
  const flow = await q.addFlow({
    data: 'root',
    children: [
      { data: 'm1', children: [{ data: 'l1' }, { data: 'l2' }] },
      { data: 'm2', children: [{ data: 'l3' }] },
    ],
  });
  await waitUntil(async () => (await q.getJob(flow.id))?.state === 'completed', 'root completed', 10_000);
  expect(order.indexOf('root')).toBe(5);
  expect(order.indexOf('m1')).toBeGreaterThan(Math.max(order.indexOf('l1'), order.indexOf('l2')));
  expect(order.indexOf('m2')).toBeGreaterThan(order.indexOf('l3'));
  const [m1, m2] = flow.children;
  expect(seen.root).toEqual({ [m1!.id]: 'm1!', [m2!.id]: 'm2!' });
  expect(seen.m1).toEqual({ [m1!.children[0]!.id]: 'l1!', [m1!.children[1]!.id]: 'l2!' });
  expect(seen.l1).toEqual({});
  expect(await q.counts()).toMatchObject({ pending: 0, working: 0, waitingChildren: 0, completed: 6 });
});

test('a child that dies fails its parent and the parent above; with ignore the parent goes on without it', async () => {
  const q = res.queue<string, string>('fail');
  await q.addFlow({ data: 'root', opts: { jobId: 'r' }, children: [{ data: 'mid', opts: { jobId: 'm' }, children: [{ data: 'x', opts: { jobId: 'x', attempts: 1 } }, { data: 'y', opts: { jobId: 'y' } }] }] });
  const x = await leaseOne(q, 'x');
  expect(await q.nack(x, { error: 'boom' })).toBe(true);
  expect(await q.getJob('m')).toMatchObject({ state: 'dead', lastError: 'child x failed: boom' });
  expect(await q.getJob('r')).toMatchObject({ state: 'dead', lastError: 'child m failed: child x failed: boom' });
  const y = await leaseOne(q, 'y'); // a sibling still runs; it no longer holds anyone
  expect(await q.ack(y, 'Y')).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 0, waitingChildren: 0, dead: 3 });

  const qi = res.queue<string, string>('ignore');
  await qi.addFlow(
    { data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', opts: { jobId: 'x' } }, { data: 'y', opts: { jobId: 'y' }, onFailure: 'fail' }] },
    { onChildFailure: 'ignore' },
  );
  expect(await qi.reject(await leaseOne(qi, 'x'), 'bad')).toBe(true);
  expect(await qi.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1 } });
  expect(await qi.ack(await leaseOne(qi, 'y'), 'Y')).toBe(true);
  const p = await leaseOne(qi, 'p');
  expect(await qi.childrenResults('p')).toEqual({ y: 'Y' });
  await qi.ack(p);
  // a child's own onFailure: 'fail' wins over the flow's 'ignore'
  await qi.addFlow({ data: 'p2', opts: { jobId: 'p2' }, children: [{ data: 'z', opts: { jobId: 'z', attempts: 1 }, onFailure: 'fail' }] }, { onChildFailure: 'ignore' });
  await qi.nack(await leaseOne(qi, 'z'), { error: 'no' });
  expect(await qi.getJob('p2')).toMatchObject({ state: 'dead', lastError: 'child z failed: no' });
});

test('a child retried then completed: its retries do not count against the parent', async () => {
  const q = res.queue<string, string>('retry');
  await q.addFlow({ data: 'p', opts: { jobId: 'p', attempts: 1 }, children: [{ data: 'c', opts: { jobId: 'c', attempts: 3 } }] });
  expect(await q.nack(await leaseOne(q, 'c'), { error: 'once', delayMs: 0 })).toBe(true);
  expect(await q.nack(await leaseOne(q, 'c'), { error: 'twice', delayMs: 0 })).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', failures: 0 });
  expect(await q.ack(await leaseOne(q, 'c'), 'third time')).toBe(true);
  const p = await leaseOne(q, 'p');
  expect(p.job.attempt).toBe(1);
  expect(await q.childrenResults('p')).toEqual({ c: 'third time' });
});

test('removing a parent removes its unfinished children, leased ones only when forced; completed ones stay', async () => {
  const q = res.queue<string, string>('remove');
  const c = res.client();
  await q.addFlow({
    data: 'root',
    opts: { jobId: 'r' },
    children: [
      { data: 'done', opts: { jobId: 'done' } },
      { data: 'held', opts: { jobId: 'held' } },
      { data: 'later', opts: { jobId: 'later', delayMs: 60_000 } },
      { data: 'mid', opts: { jobId: 'm' }, children: [{ data: 'leaf', opts: { jobId: 'leaf' } }] },
    ],
  });
  await q.ack(await leaseOne(q, 'done'), 'D');
  const held = await leaseOne(q, 'held');
  await expect(q.remove('r')).rejects.toThrow('is leased');
  expect(await q.getJob('leaf')).toMatchObject({ state: 'pending' });
  expect(await q.remove('r', { force: true })).toBe(true);
  for (const id of ['r', 'held', 'later', 'm', 'leaf']) expect(await q.getJob(id)).toBeNull();
  expect(await q.getJob('done')).toMatchObject({ state: 'completed', result: 'D' });
  expect(await q.ack(held, 'late')).toBe(false); // its lease went with it
  expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, working: 0, waitingChildren: 0, completed: 1 });
  const d = q.keys.derived;
  expect(await c.exists(d.flows, d.flowWait, d.deps('r'), d.kres('r'), d.deps('m'), d.kres('m'))).toBe(0);

  // a child removed on its own fails its parent (test/flows/removed-children.spec.ts)
  await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'k', opts: { jobId: 'k' } }] });
  expect(await q.remove('k')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child k was removed' });
});

test('a flow is atomic: a bad job anywhere writes nothing, with a typed error', async () => {
  const q = res.queue<unknown, unknown>('atomic');
  await q.add('existing', { jobId: 'taken' });
  const before = await snapshot(q);
  // a flow whose last leaf is `leaf`, deep down; bad leaves are what the calls below test
  const deep = (leaf: object) => ({ data: 1, opts: { jobId: 'root' }, children: [{ data: 2, children: [{ data: 3 }, leaf] }] }) as unknown as FlowJob<unknown>;
  await expect(q.addFlow(deep({ data: 4, opts: { priority: 5000 } }))).rejects.toBeInstanceOf(ValidationError);
  await expect(q.addFlow(deep({ data: () => 1 }))).rejects.toThrow('flow.children[0].children[1].data');
  await expect(q.addFlow(deep({ data: 4, queue: 'a{b' }))).rejects.toThrow('flow.children[0].children[1].queue');
  await expect(q.addFlow(deep({ data: 4, opts: { jobId: 'root' } }))).rejects.toThrow('appears twice');
  await expect(q.addFlow(deep({ data: 4, onFailure: 'maybe' }))).rejects.toBeInstanceOf(ValidationError);
  await expect(q.addFlow({ data: 1, children: [{ data: 2 }], opts: { delayMs: 5 } })).rejects.toThrow('a parent becomes pending');
  await expect(q.addFlow({ data: 1, onFailure: 'ignore' })).rejects.toThrow("child's option");
  // known only in Redis: checked by the script before its first write
  const err = await q.addFlow(deep({ data: 4, opts: { jobId: 'taken' } })).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FlowJobExistsError);
  expect(err).toMatchObject({ jobId: 'taken', code: 'RELQ_FLOW_JOB_EXISTS' });
  expect(await snapshot(q)).toEqual(before);

  // the same root jobId again: the whole flow is a duplicate, nothing written
  expect((await q.addFlow(deep({ data: 4 }))).created).toBe(true);
  const after = await snapshot(q);
  const again = await q.addFlow(deep({ data: 4 }));
  expect(again.created).toBe(false);
  expect(await snapshot(q)).toEqual(after);
});

test('a stale lease of a child neither completes it nor advances its parent', async () => {
  const q = res.queue<string, string>('stale');
  await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', opts: { jobId: 'c', attempts: 3 } }] });
  const first = await leaseOne(q, 'c', 50);
  await waitUntil(async () => (await q.sweep()).stalled === 1, 'the lease expired and was swept');
  const second = await leaseOne(q, 'c');
  expect(await q.ack(first, 'stale')).toBe(false);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: {} } });
  expect(await q.ack(second, 'fresh')).toBe(true);
  expect(await q.ack(second, 'again')).toBe(false);
  expect(await q.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 0, results: { c: 'fresh' } } });
});

test('a settle replayed after a lost reply answers from its record and tells the parent once', async () => {
  const q = res.queue<string, string>('replay');
  const internals = internalsOf<string>(q)!;
  await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b' } }] });
  const a = await leaseOne(q, 'a');
  expect(await internals.settle([ackItem(a, JSON.stringify('A'))], 'req-1')).toEqual([true]);
  expect(await internals.settle([ackItem(a, JSON.stringify('A'))], 'req-1')).toEqual([true]); // the replay
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: { a: 'A' } } });
  // a replayed lease call that also settled: the same
  const b = await leaseOne(q, 'b');
  const step1 = await internals.leaseStep([ackItem(b, '')], 1, 30_000, false, 'req-2');
  const step2 = await internals.leaseStep([ackItem(b, '')], 1, 30_000, false, 'req-2');
  expect(step1.leases.map((l) => l.job.id)).toEqual(['p']);
  expect(step2.leases.map((l) => l.job.id)).toEqual(['p']);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 1, waitingChildren: 0 });
});

test("a parent's flow keys go with it: completed with keepCompletedMs 0, cleaned, purged, or its queue deleted", async () => {
  const q = res.queue<string, string>('keys');
  const c = res.client();
  const d = q.keys.derived;
  await q.addFlow({ data: 'p', opts: { jobId: 'p', keepCompletedMs: 0 }, children: [{ data: 'c', opts: { jobId: 'c' } }] });
  await q.ack(await leaseOne(q, 'c'), 'C');
  await q.ack(await leaseOne(q, 'p'));
  expect(await c.exists(d.flows, d.deps('p'), d.kres('p'))).toBe(0);

  await q.addFlow({ data: 'p', opts: { jobId: 'p2' }, children: [{ data: 'c', opts: { jobId: 'c2' } }] });
  await q.ack(await leaseOne(q, 'c2'), 'C');
  await q.ack(await leaseOne(q, 'p2'));
  expect(await c.exists(d.kres('p2'))).toBe(1);
  expect(await q.clean('completed')).toEqual(expect.arrayContaining(['p2', 'c2']));
  expect(await c.exists(d.flows, d.kres('p2'))).toBe(0);

  await q.addFlow({ data: 'p', opts: { jobId: 'p3', attempts: 1 }, children: [{ data: 'c', opts: { jobId: 'c3' } }] });
  await q.ack(await leaseOne(q, 'c3'), 'C');
  await q.reject(await leaseOne(q, 'p3'), 'no');
  expect(await q.purgeDead(['p3'])).toEqual(['p3']);
  expect(await c.exists(d.flows, d.kres('p3'))).toBe(0);

  await q.addFlow({ data: 'p', opts: { jobId: 'p4' }, children: [{ data: 'c', opts: { jobId: 'c4' } }, { data: 'c', opts: { jobId: 'c5' } }] });
  await q.ack(await leaseOne(q, 'c4'), 'C');
  await q.deleteQueue();
  expect(await c.exists(d.flows, d.flowWait, d.deps('p4'), d.kres('p4'))).toBe(0);
});

test('a bounded queue without room for the whole flow, or a closed queue, refuses it and writes nothing', async () => {
  const q = res.queue<string, string>('bounded', { bound: 2 });
  await expect(q.addFlow({ data: 'p', children: [{ data: 'a' }, { data: 'b' }] })).rejects.toBeInstanceOf(QueueFullError);
  expect(await q.counts()).toMatchObject({ pending: 0, waitingChildren: 0 });
  expect((await q.addFlow({ data: 'p', children: [{ data: 'a' }] })).created).toBe(true);
  const open = res.queue<string, string>('closed');
  await open.closeQueue();
  await expect(open.addFlow({ data: 'p', children: [{ data: 'a' }] })).rejects.toBeInstanceOf(QueueClosedError);
});
