/**
 * Children added at run time (job.addChildren / queue.addChildren) and a parent that waits for
 * them (job.waitForChildren / queue.waitForChildren), on a real Redis through the public API:
 * a parent that fans out when it runs and resumes with its children's results; fenced by the
 * lease; idempotent across a crash between steps; children in other queues of the slot; the
 * failure policies of children that die before their parent waits; nothing left behind by a
 * parent that completes without waiting.
 */
import { createTestJob } from '../../lib/testing/index.js';
import { LeaseLostError, QueueFullError, ValidationError, Worker, type Job, type Lease, type Queue, type QueueEvent } from '../../lib/index.js';
import { eventsReady, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

type Step = { kind: 'parent'; step: 'fan-out' | 'sum' } | { kind: 'child'; n: number };

async function leaseOne<D>(q: Queue<D, unknown>, id: string): Promise<Lease<D>> {
  const [l] = await q.lease({ count: 1 });
  expect(l?.job.id).toBe(id);
  return l!;
}

/** The keys of the flow bookkeeping of parent `id` (flows/flows.lua), that exist. */
async function flowKeysOf(q: Queue<any, any>, id: string): Promise<string[]> {
  const c = res.client();
  const keys: string[] = [];
  for (const k of ['deps', 'kres', 'kfail', 'kids']) {
    const key = `${q.keys.tag}:${k}:${id}`;
    if ((await c.exists(key)) === 1) keys.push(key);
  }
  if ((await c.hexists(q.keys.derived.flows, id)) === 1) keys.push(`${q.keys.derived.flows} ${id}`);
  return keys;
}

test('a parent fans out when it runs, waits without a failed attempt, and resumes with its children’s results', async () => {
  const q = res.queue<Step, number>('fan-out');
  const events: QueueEvent[] = [];
  const sub = q.events().subscribe((e) => events.push(e));
  await eventsReady(res.client(), q);
  const runs: string[] = [];
  const handler = async (job: Job<Step>): Promise<number> => {
    runs.push(`${job.id}:${job.data.kind === 'parent' ? job.data.step : job.data.n}`);
    if (job.data.kind === 'child') return job.data.n * 10;
    if (job.data.step === 'fan-out') {
      // ids derived from the parent's: a run after a crash adds nothing twice
      const added = await job.addChildren([1, 2, 3].map((n): { data: Step; opts: { jobId: string } } => ({ data: { kind: 'child', n }, opts: { jobId: `${job.id}-${n}` } })));
      expect(added.map((a) => [a.id, a.created])).toEqual([1, 2, 3].map((n) => [`${job.id}-${n}`, true]));
      expect(await job.updateData({ kind: 'parent', step: 'sum' })).toBe(true);
      expect(await job.waitForChildren()).toBe(true);
      return -1; // dropped: the attempt ended with the wait
    }
    const results = await job.childrenResults<number>();
    return Object.values(results).reduce((a, b) => a + b, 0);
  };
  await q.add({ kind: 'parent', step: 'fan-out' }, { jobId: 'p' });
  res.worker(new Worker<Step, number>(q, handler, { concurrency: 1 }));
  await waitUntil(async () => (await q.getJob('p'))?.state === 'completed', 'the parent completed', 10_000);
  const p = await q.getJob('p');
  expect(p).toMatchObject({ result: 60, failures: 0, requeues: 1, children: { unfinished: 0, results: { 'p-1': 10, 'p-2': 20, 'p-3': 30 }, failed: {} } });
  expect(runs).toEqual(['p:fan-out', 'p-1:1', 'p-2:2', 'p-3:3', 'p:sum']);
  await waitUntil(() => events.some((e) => e.type === 'completed' && e.id === 'p'), 'the completed event');
  const ofParent = events.filter((e) => e.id === 'p').map((e) => e.type);
  expect(ofParent).toEqual(['added', 'leased', 'waiting-children', 'promoted', 'leased', 'completed']);
  expect(events.filter((e) => e.id === 'p-1').map((e) => e.type)).toEqual(['added', 'leased', 'completed']);
  sub.unsubscribe();
  expect(await q.getFlow('p')).toMatchObject({ state: 'completed', total: 3, children: [{ id: 'p-1', state: 'completed' }, { id: 'p-2' }, { id: 'p-3' }] });
});

test('a handler that crashed after adding its children adds nothing twice when it runs again', async () => {
  const q = res.queue<Step, number>('crash-between-steps');
  let crashes = 0;
  const childRuns: Record<string, number> = {};
  const handler = async (job: Job<Step>): Promise<number> => {
    if (job.data.kind === 'child') {
      childRuns[job.id] = (childRuns[job.id] ?? 0) + 1;
      return job.data.n;
    }
    if (job.data.step === 'fan-out') {
      const added = await job.addChildren([{ data: { kind: 'child', n: 1 } as Step, opts: { jobId: 'c1' } }, { data: { kind: 'child', n: 2 } as Step, opts: { jobId: 'c2' } }]);
      if (crashes === 0) {
        crashes += 1;
        expect(added.map((a) => a.created)).toEqual([true, true]);
        throw new Error('crashed before saving its step');
      }
      expect(added.map((a) => a.created)).toEqual([false, false]); // there already
      await job.updateData({ kind: 'parent', step: 'sum' });
      await job.waitForChildren();
      return -1;
    }
    return Object.values(await job.childrenResults<number>()).reduce((a, b) => a + b, 0);
  };
  await q.add({ kind: 'parent', step: 'fan-out' }, { jobId: 'p', attempts: 3, backoff: { type: 'fixed', delayMs: 0 } });
  res.worker(new Worker<Step, number>(q, handler, { concurrency: 2 }));
  await waitUntil(async () => (await q.getJob('p'))?.state === 'completed', 'the parent completed', 10_000);
  expect(await q.getJob('p')).toMatchObject({ result: 3, failures: 1, requeues: 1 }); // the crash was a failed attempt; the wait was not
  expect(childRuns).toEqual({ c1: 1, c2: 1 });
  expect((await q.getDependencies('p')).total).toBe(2);
});

test('children in other queues of the slot; a parent whose children all completed before it waits runs again at once', async () => {
  const parents = res.queue<string, string>('{rt}-parents', { defaults: { keepCompleted: { ageMs: 0 } } });
  const kids = res.queue<string, string>('{rt}-kids', { prefix: parents.prefix });
  await parents.add('p', { jobId: 'p' });
  const lease = await leaseOne(parents, 'p');
  const added = await parents.addChildren(lease, [
    { data: 'a', queue: kids.name, opts: { jobId: 'a' } },
    { data: 'b', queue: kids.name, opts: { jobId: 'b' }, children: [{ data: 'b1', opts: { jobId: 'b1' } }] },
  ]);
  expect(added).toEqual([
    { id: 'a', created: true, children: [] },
    { id: 'b', created: true, children: [{ id: 'b1', created: true, children: [] }] },
  ]);
  expect(await parents.getJob('p')).toMatchObject({ state: 'working', children: { unfinished: 2 } });
  expect(await kids.getJob('b')).toMatchObject({ state: 'waiting-children', parent: { id: 'p', queue: parents.name } });
  expect(await kids.getJobs('pending')).toMatchObject([{ id: 'a', parent: { id: 'p', queue: parents.name } }, { id: 'b1', parent: { id: 'b', queue: kids.name } }]);
  expect((await parents.getJob('p'))!.parent).toBeUndefined();
  // the children finish while the parent still runs; each lease names its parent
  const a = await leaseOne(kids, 'a');
  expect(a.job.parent).toEqual({ id: 'p', queue: parents.name });
  expect(await kids.ack(a, 'A')).toBe(true);
  const b1 = await leaseOne(kids, 'b1');
  expect(b1.job.parent).toEqual({ id: 'b', queue: kids.name });
  expect(await kids.ack(b1, 'B1')).toBe(true);
  expect(await kids.ack(await leaseOne(kids, 'b'), 'B')).toBe(true);
  expect(await parents.getJob('p')).toMatchObject({ state: 'working', children: { unfinished: 0, results: { a: 'A', b: 'B' } } });
  expect(await parents.waitForChildren(lease)).toBe(true);
  expect(await parents.getJob('p')).toMatchObject({ state: 'pending', requeues: 1 });
  const again = await leaseOne(parents, 'p');
  expect(await parents.childrenResults('p')).toEqual({ a: 'A', b: 'B' });
  expect(await parents.ack(again, 'done')).toBe(true);
  // dropped at once, its keys with it (its second lease knew it a parent)
  expect(await flowKeysOf(parents, 'p')).toEqual([]);
});

test('a stale lease adds no child and ends no wait; bad children are refused before anything is written', async () => {
  const q = res.queue<string, string>('rt-fenced');
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await expect(q.addChildren(lease, [])).rejects.toThrow(ValidationError);
  await expect(q.addChildren(lease, [{ data: 'c', opts: { delayMs: -1 } }])).rejects.toThrow('children[0].opts');
  await expect(q.addChildren(lease, [{ data: 'c', opts: { jobId: 'p' } }])).rejects.toThrow('appears twice');
  await expect(q.addChildren(lease, [{ data: 'c' }], { onChildFailure: 'explode' as never })).rejects.toThrow(ValidationError);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 1 });

  expect(await q.remove('p', { force: true })).toBe(true);
  await q.add('p', { jobId: 'p2' });
  await expect(q.addChildren(lease, [{ data: 'c', opts: { jobId: 'c' } }])).rejects.toThrow(LeaseLostError);
  expect(await q.getJob('c')).toBeNull();
  expect(await q.waitForChildren(lease)).toBe(false);
  expect(await q.counts()).toMatchObject({ pending: 1, waitingChildren: 0 });

  // a forged token for a job another lease holds
  const held = await leaseOne(q, 'p2');
  await expect(q.addChildren({ job: { id: 'p2' }, token: `${held.token}x` }, [{ data: 'c' }])).rejects.toThrow(LeaseLostError);
  expect(await q.waitForChildren({ job: { id: 'p2' }, token: 'forged' })).toBe(false);
  expect(await q.getJob('p2')).toMatchObject({ state: 'working' });
  expect(await q.counts()).toMatchObject({ pending: 0, working: 1 });
});

test('a bounded queue without room refuses the children whole', async () => {
  const q = res.queue<string, string>('rt-bounded', { bound: 3 });
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await expect(q.addChildren(lease, [{ data: 'a' }, { data: 'b' }, { data: 'c' }])).rejects.toThrow(QueueFullError);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 1 });
  expect(await q.getJob('p')).not.toHaveProperty('children');
  await q.addChildren(lease, [{ data: 'a' }, { data: 'b' }]);
  expect(await q.counts()).toMatchObject({ pending: 2, working: 1 });
});

test("children that die before their parent waits: 'fail' kills it when it waits, 'continue' runs it at once, 'ignore' waits on", async () => {
  const q = res.queue<string, string>('rt-policies');
  const die = async (id: string) => expect(await q.nack(await leaseOne(q, id), { error: 'boom' })).toBe(true);

  await q.add('p1', { jobId: 'p1' });
  const l1 = await leaseOne(q, 'p1');
  await q.addChildren(l1, [{ data: 'x', opts: { jobId: 'x1', attempts: 1 } }, { data: 'y', opts: { jobId: 'y1' } }]);
  await die('x1');
  expect(await q.getJob('p1')).toMatchObject({ state: 'working' }); // its handler still owns it
  expect(await q.waitForChildren(l1)).toBe(true);
  expect(await q.getJob('p1')).toMatchObject({ state: 'dead', lastError: 'child x1 failed: boom', failures: 0 });
  expect(await q.getJob('y1')).toMatchObject({ state: 'pending' }); // holds no one now, as in a flow
  expect(await q.remove('y1')).toBe(true);

  await q.add('p2', { jobId: 'p2', priority: 1 }); // leased before its children when it is pending again
  const l2 = await leaseOne(q, 'p2');
  await q.addChildren(l2, [{ data: 'x', onFailure: 'continue', opts: { jobId: 'x2', attempts: 1 } }, { data: 'y', opts: { jobId: 'y2' } }]);
  await die('x2');
  expect(await q.waitForChildren(l2)).toBe(true);
  expect(await q.getJob('p2')).toMatchObject({ state: 'pending', children: { unfinished: 1, failed: { x2: 'boom' } } });
  // it ran on without waiting; it waits the next time
  const l2b = await leaseOne(q, 'p2');
  expect(await q.waitForChildren(l2b)).toBe(true);
  expect(await q.getJob('p2')).toMatchObject({ state: 'waiting-children' });
  expect(await q.ack(await leaseOne(q, 'y2'), 'Y')).toBe(true);
  expect(await q.getJob('p2')).toMatchObject({ state: 'pending', children: { unfinished: 0, results: { y2: 'Y' }, failed: { x2: 'boom' } } });
  await q.ack(await leaseOne(q, 'p2'));

  await q.add('p3', { jobId: 'p3' });
  const l3 = await leaseOne(q, 'p3');
  await q.addChildren(l3, [{ data: 'x', onFailure: 'ignore', opts: { jobId: 'x3', attempts: 1 } }, { data: 'y', opts: { jobId: 'y3' } }]);
  await die('x3');
  expect(await q.waitForChildren(l3)).toBe(true);
  expect(await q.getJob('p3')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, failed: { x3: 'boom' } } });
  expect(await q.ack(await leaseOne(q, 'y3'), 'Y')).toBe(true);
  expect(await q.getJob('p3')).toMatchObject({ state: 'pending' });
});

test('a parent that completes without waiting leaves its children to run on, and nothing behind once they are done', async () => {
  const q = res.queue<string, string>('rt-no-wait', { defaults: { keepCompleted: { ageMs: 0 } } });
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b' } }]);
  expect(await q.ack(lease, 'early')).toBe(true);
  expect(await q.getJob('p')).toBeNull();
  expect(await q.ack(await leaseOne(q, 'a'), 'A')).toBe(true);
  expect(await flowKeysOf(q, 'p')).toEqual([]); // the first child to find its parent gone took its keys
  expect(await q.ack(await leaseOne(q, 'b'), 'B')).toBe(true);
  expect(await flowKeysOf(q, 'p')).toEqual([]);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 0, waitingChildren: 0 });
});

test('a parent dropped at its ack with no child left to find it gone: its keys go with the next sweep', async () => {
  const q = res.queue<string, string>('rt-swept', { defaults: { keepCompleted: { ageMs: 0 } } });
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'a', opts: { jobId: 'a' } }]);
  expect(await q.remove('a')).toBe(true); // its only child: none will find it gone
  expect(await q.ack(lease, 'done')).toBe(true); // its lease was granted before it became a parent
  expect(await q.getJob('p')).toBeNull();
  expect(await flowKeysOf(q, 'p')).not.toEqual([]);
  await q.sweep();
  expect(await flowKeysOf(q, 'p')).toEqual([]);
  expect(await res.client().exists(q.keys.derived.runningParents)).toBe(0);

  // one that waits is leased again as a parent: the sweep forgets it, its keys stay with it
  await q.add('p2', { jobId: 'p2' });
  const first = await leaseOne(q, 'p2');
  await q.addChildren(first, [{ data: 'b', opts: { jobId: 'b' } }]);
  await q.sweep();
  expect(await res.client().zrange(q.keys.derived.runningParents, '0', '-1')).toEqual(['p2']); // still under that lease
  expect(await q.waitForChildren(first)).toBe(true);
  await q.sweep();
  expect(await res.client().exists(q.keys.derived.runningParents)).toBe(0);
  expect(await flowKeysOf(q, 'p2')).not.toEqual([]);
  await q.ack(await leaseOne(q, 'b'), 'B');
  await q.ack(await leaseOne(q, 'p2'), 'P2');
  expect(await flowKeysOf(q, 'p2')).toEqual([]);
});

test("a waiting parent made pending by its last child's death ('continue') waits for the children it adds next", async () => {
  const q = res.queue<string, string>('rt-continue-last');
  await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', onFailure: 'continue', opts: { jobId: 'x', attempts: 1 } }] });
  expect(await q.nack(await leaseOne(q, 'x'), { error: 'boom' })).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 0, failed: { x: 'boom' } } });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'y', opts: { jobId: 'y' } }]);
  expect(await q.waitForChildren(lease)).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1 } });
});

test('a removed running parent takes its keys; its children hold no one', async () => {
  const q = res.queue<string, string>('rt-removed');
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'a', opts: { jobId: 'a' } }]);
  expect(await q.remove('p', { force: true })).toBe(true);
  expect(await flowKeysOf(q, 'p')).toEqual([]);
  expect(await q.getJob('a')).toBeNull(); // its own queue's children go with it, as in a flow
});

test('the testing kit records the children a handler adds and its wait', async () => {
  const job = createTestJob<Step>({ kind: 'parent', step: 'fan-out' });
  const added = await job.addChildren([{ data: { kind: 'child', n: 1 }, opts: { jobId: 'k1' } }, { data: { kind: 'child', n: 2 } }]);
  expect(added[0]).toEqual({ id: 'k1', created: true, children: [] });
  expect(added[1]!.created).toBe(true);
  await expect(job.addChildren([{ data: 1, opts: { priority: 'high' as never } }])).rejects.toThrow(ValidationError);
  expect(await job.waitForChildren()).toBe(true);
  expect(job.childrenAdded).toHaveLength(1);
  expect(job.childrenWaits).toBe(1);
  expect(await job.waitForChildren()).toBe(false); // the lease ended with the first
  await expect(job.addChildren([{ data: 1 }])).rejects.toThrow(LeaseLostError);
});

test("a dropped parent's keys go with the first child that finds it gone, whatever the child's policy", async () => {
  const q = res.queue<string, string>('rt-dropped-keys', { defaults: { keepCompleted: { ageMs: 0 } } });
  const kids = res.queue<string, string>('{rt}-dropped-kids', { prefix: q.prefix });
  const parents = res.queue<string, string>('{rt}-dropped-parents', { prefix: q.prefix, defaults: { keepCompleted: { ageMs: 0 } } });
  // 'fail': a child removed (or dead) finds its parent gone
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'a', opts: { jobId: 'a' } }]);
  expect(await q.ack(lease, 'early')).toBe(true);
  expect(await q.remove('a')).toBe(true);
  expect(await flowKeysOf(q, 'p')).toEqual([]);
  // 'ignore' of a child that died with its own child: nothing written to the parent that is gone
  await parents.add('p2', { jobId: 'p2' });
  const l2 = await leaseOne(parents, 'p2');
  await parents.addChildren(l2, [{ data: 'b', queue: kids.name, onFailure: 'ignore', opts: { jobId: 'b' }, children: [{ data: 'c', opts: { jobId: 'c', attempts: 1 } }] }]);
  expect(await parents.ack(l2, 'early')).toBe(true);
  expect(await kids.nack(await leaseOne(kids, 'c'), { error: 'boom' })).toBe(true);
  expect(await kids.getJob('b')).toMatchObject({ state: 'dead' });
  expect(await flowKeysOf(parents, 'p2')).toEqual([]);
});

test("a parent dead at its waitForChildren() by a 'fail' child holds its other children no more", async () => {
  const q = res.queue<string, string>('rt-dead-at-wait');
  await q.add('p', { jobId: 'p' });
  const lease = await leaseOne(q, 'p');
  await q.addChildren(lease, [{ data: 'x', opts: { jobId: 'x', attempts: 1 } }, { data: 'y', opts: { jobId: 'y' } }]);
  expect(await q.nack(await leaseOne(q, 'x'), { error: 'boom' })).toBe(true);
  expect(await q.waitForChildren(lease)).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child x failed: boom', children: { unfinished: 0, results: {} } });
  expect(await q.ack(await leaseOne(q, 'y'), 'Y')).toBe(true);
  expect(await q.childrenResults('p')).toEqual({});
});
