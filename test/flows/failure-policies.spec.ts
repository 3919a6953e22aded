/**
 * A child's failure policy on a real Redis, through the public API: 'fail' (default) fails the
 * parent, 'ignore' goes on without the child and keeps its error, 'continue' makes the parent
 * pending at once and keeps the error, 'remove' goes on without a trace; a removed child counts
 * as one that died.
 */
import type { ChildFailurePolicy, Lease, Queue } from '../../lib/index.js';
import { useRedis } from '../support/engine-harness.js';

const res = useRedis();

async function leaseOne(q: Queue<string, string>, id: string): Promise<Lease<string>> {
  const [l] = await q.lease();
  expect(l?.job.id).toBe(id);
  return l!;
}

/** A parent 'p' with a child 'x' (one attempt, `policy`) and a delayed sibling 's'. */
async function flow(q: Queue<string, string>, policy: ChildFailurePolicy): Promise<void> {
  await q.addFlow({
    data: 'p',
    opts: { jobId: 'p' },
    children: [
      { data: 'x', onFailure: policy, opts: { jobId: 'x', attempts: 1 } },
      { data: 's', opts: { jobId: 's', delayMs: 60_000 } },
    ],
  });
}

async function childDies(q: Queue<string, string>): Promise<void> {
  expect(await q.nack(await leaseOne(q, 'x'), { error: 'boom' })).toBe(true);
}

test("'ignore': the parent waits for its other children, then runs, the child's error in children.failed", async () => {
  const q = res.queue<string, string>('ignore');
  await flow(q, 'ignore');
  await childDies(q);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, failed: { x: 'boom' } } });
  await q.promote('s');
  expect(await q.ack(await leaseOne(q, 's'), 'S')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 0, results: { s: 'S' }, failed: { x: 'boom' } } });
});

test("'continue': the parent is pending at once, whatever its other children do; their results still reach it", async () => {
  const q = res.queue<string, string>('continue');
  await flow(q, 'continue');
  await childDies(q);
  expect(await q.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 1, results: {}, failed: { x: 'boom' } } });
  await q.promote('s');
  expect(await q.ack(await leaseOne(q, 'p'), 'P')).toBe(true);
  expect(await q.ack(await leaseOne(q, 's'), 'S')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'completed', children: { unfinished: 0, results: { s: 'S' }, failed: { x: 'boom' } } });
  expect(await q.counts()).toMatchObject({ pending: 0, completed: 2 });
});

test("'remove': the parent goes on without the child and keeps nothing of it", async () => {
  const q = res.queue<string, string>('remove');
  await flow(q, 'remove');
  await childDies(q);
  expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: {}, failed: {} } });
});

test("'fail' (the default, also of addFlow's onChildFailure): the parent dies with the child", async () => {
  const q = res.queue<string, string>('fail');
  await flow(q, 'fail');
  await childDies(q);
  expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child x failed: boom' });
});

test("addFlow's onChildFailure is every child's default; a child removed before it completed counts as dead ('removed')", async () => {
  const q = res.queue<string, string>('default');
  await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', opts: { jobId: 'x' } }, { data: 'y', opts: { jobId: 'y' } }] }, { onChildFailure: 'continue' });
  expect(await q.remove('x')).toBe(true);
  expect(await q.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 1, failed: { x: 'removed' } } });
  await expect(q.addFlow({ data: 'p', children: [{ data: 'c' }] }, { onChildFailure: 'maybe' as never })).rejects.toThrow("'fail', 'ignore', 'continue' or 'remove'");
});

test("across queues: 'continue' makes the parent in the other queue pending at once", async () => {
  const a = res.queue<string, string>('{pol}-a');
  const b = res.queue<string, string>('{pol}-b', { prefix: a.prefix });
  await a.addFlow({
    data: 'p',
    opts: { jobId: 'p' },
    children: [
      { data: 'x', queue: b.name, onFailure: 'continue', opts: { jobId: 'x', attempts: 1 } },
      { data: 's', queue: b.name, opts: { jobId: 's', delayMs: 60_000 } },
    ],
  });
  expect(await b.nack(await leaseOne(b, 'x'), { error: 'boom' })).toBe(true);
  expect(await a.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 1, failed: { x: 'boom' } } });
});
