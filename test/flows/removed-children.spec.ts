/**
 * A parent never runs because its children vanished: drain() takes waiting parents with the
 * jobs it removes, a child removed on its own fails its parent (unless the parent ignores its
 * failure), and clean, purgeDead, deleteQueue and a closed queue leave no parent to run early.
 */
import { QueueDeletedError, type Lease, type Queue } from '../../lib/index.js';
import { blockedClients, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree } from '../support/job-indexes.js';

const res = useRedis();

async function leaseOne<D>(q: Queue<D, unknown>, id: string): Promise<Lease<D>> {
  const [l] = await q.lease();
  expect(l?.job.id).toBe(id);
  return l!;
}

/** The flow keys a parent leaves behind, and the queue's flow indexes. */
async function flowKeys(q: Queue<any, any>, parents: string[]): Promise<number> {
  const d = q.keys.derived;
  return res.client().exists(d.flows, d.flowWait, ...parents.flatMap((p) => [d.deps(p), d.kres(p)]));
}

describe('drain', () => {
  test('a parent whose children were drained is drained with them: nothing of the flow runs', async () => {
    const q = res.queue<string, string>('drain');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b' } }] });
    expect(await q.drain()).toBe(3);
    expect(await q.lease()).toEqual([]);
    expect(await q.getJob('p')).toBeNull();
    expect(await q.counts()).toMatchObject({ pending: 0, waitingChildren: 0, dead: 0 });
    expect(await flowKeys(q, ['p'])).toBe(0);
  });

  test('every waiting parent goes, whatever its children are: delayed, grouped, prioritized, partly done, leased, or waiting themselves', async () => {
    const q = res.queue<string, string>('mixed');
    const obs = res.client();
    await q.addFlow({
      data: 'root',
      opts: { jobId: 'root' },
      children: [
        { data: 'done', opts: { jobId: 'done', priority: 9 } },
        { data: 'later', opts: { jobId: 'later', delayMs: 60_000 } },
        { data: 'mid', opts: { jobId: 'mid' }, children: [{ data: 'held', opts: { jobId: 'held', priority: 5 } }] },
      ],
    });
    await q.addFlow({ data: 'other', opts: { jobId: 'other' }, children: [{ data: 'busy', opts: { jobId: 'busy', priority: 1 } }] });
    expect(await q.ack(await leaseOne(q, 'done'), 'D')).toBe(true);
    const held = await leaseOne(q, 'held');
    const busy = await leaseOne(q, 'busy');
    await q.addFlow({ data: 'gp', opts: { jobId: 'gp' }, children: [{ data: 'grouped', opts: { jobId: 'grouped', group: 'g' } }] });

    // removed: later, mid, root, other, grouped, gp (leased held and busy stay, completed done stays)
    expect(await q.drain()).toBe(6);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, waitingChildren: 0, working: 2, completed: 1, dead: 0 });
    for (const id of ['root', 'mid', 'other', 'later', 'grouped', 'gp']) expect(await q.getJob(id)).toBeNull();
    expect(await flowKeys(q, ['root', 'mid', 'other', 'gp'])).toBe(0);
    await booksAgree(obs, q);

    // the leased children settle as usual and tell no one
    expect(await q.ack(held, 'H')).toBe(true);
    expect(await q.ack(busy, 'B')).toBe(true);
    expect(await q.lease()).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 0, waitingChildren: 0, completed: 3, dead: 0 });
    expect(await flowKeys(q, ['root', 'mid', 'other', 'gp'])).toBe(0);
  });

  test('a closed queue holding a flow: a worker blocked on it sees it drained, and the parent never runs', async () => {
    const q = res.queue<string, string>('closed');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', opts: { jobId: 'c', delayMs: 60_000 } }] });
    await q.closeQueue();
    const blocked = q.lease({ blockMs: 5000 });
    await waitUntil(async () => (await blockedClients(res.client())) >= 1, 'the lease blocks on the closed queue');
    expect(await q.drain()).toBe(2);
    expect(await blocked).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, waitingChildren: 0 });
  });

  test('a bounded queue: the drained parents free their slots too', async () => {
    const q = res.queue<string, string>('bounded', { bound: 3 });
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a' }, { data: 'b' }] });
    const waiting = q.add('next', { waitMs: 10_000 });
    await waitUntil(async () => (await q.queueState()).waitingProducers === 1, 'the add waits for room');
    expect(await q.drain()).toBe(3);
    await expect(waiting).resolves.toMatchObject({ created: true });
    expect(await q.counts()).toMatchObject({ pending: 1, waitingChildren: 0 });
  });
});

describe('remove', () => {
  test('a child removed before it completed fails its parent, and the parent above, like a death', async () => {
    const q = res.queue<string, string>('remove');
    await q.addFlow({
      data: 'root',
      opts: { jobId: 'r' },
      children: [{ data: 'mid', opts: { jobId: 'm' }, children: [{ data: 'k', opts: { jobId: 'k' } }, { data: 's', opts: { jobId: 's' } }] }],
    });
    expect(await q.ack(await leaseOne(q, 'k'), 'K')).toBe(true);
    expect(await q.remove('s')).toBe(true);
    expect(await q.getJob('m')).toMatchObject({ state: 'dead', lastError: 'child s was removed' });
    expect(await q.getJob('r')).toMatchObject({ state: 'dead', lastError: 'child m failed: child s was removed' });
    expect(await q.lease()).toEqual([]);
    // retryDead runs the parent with the results its children left, as after a death
    expect(await q.retryDead(['m'])).toEqual(['m']);
    const m = await leaseOne(q, 'm');
    expect(await q.childrenResults('m')).toEqual({ k: 'K' });
    expect(await q.ack(m, 'M')).toBe(true);
    expect(await q.getJob('r')).toMatchObject({ state: 'dead' });
  });

  test('its last child removed, a parent does not become pending; siblings still run, holding no one', async () => {
    const q = res.queue<string, string>('last');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b', delayMs: 60_000 } }] });
    expect(await q.remove('b')).toBe(true);
    expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child b was removed' });
    expect(await q.ack(await leaseOne(q, 'a'), 'A')).toBe(true);
    expect(await q.lease()).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, waitingChildren: 0, dead: 1, completed: 1 });
  });

  test('a removed waiting parent fails the parent above it; a leased child removed by force fails its parent', async () => {
    const q = res.queue<string, string>('nested');
    await q.addFlow({ data: 'root', opts: { jobId: 'r' }, children: [{ data: 'mid', opts: { jobId: 'm' }, children: [{ data: 'leaf', opts: { jobId: 'l' } }] }] });
    expect(await q.remove('m')).toBe(true);
    expect(await q.getJob('l')).toBeNull();
    expect(await q.getJob('r')).toMatchObject({ state: 'dead', lastError: 'child m was removed' });

    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', opts: { jobId: 'c' } }] });
    const c = await leaseOne(q, 'c');
    expect(await q.remove('c', { force: true })).toBe(true);
    expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child c was removed' });
    expect(await q.ack(c, 'late')).toBe(false);
    expect(await q.lease()).toEqual([]);
  });

  test("a child whose failure its parent ignores: removed, the parent goes on without it", async () => {
    const q = res.queue<string, string>('ignore');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', opts: { jobId: 'x' }, onFailure: 'ignore' }, { data: 'y', opts: { jobId: 'y' } }] });
    expect(await q.remove('x')).toBe(true);
    expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1 } });
    expect(await q.ack(await leaseOne(q, 'y'), 'Y')).toBe(true);
    await leaseOne(q, 'p');
    expect(await q.childrenResults('p')).toEqual({ y: 'Y' });
  });
});

describe('finished children, deleted and closed queues', () => {
  test("clean('completed') and purgeDead of children change nothing for their parent", async () => {
    const q = res.queue<string, string>('clean');
    await q.addFlow(
      { data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'x', opts: { jobId: 'x', attempts: 1 } }, { data: 'b', opts: { jobId: 'b' } }] },
      { onChildFailure: 'ignore' },
    );
    expect(await q.ack(await leaseOne(q, 'a'), 'A')).toBe(true);
    expect(await q.nack(await leaseOne(q, 'x'), { error: 'no' })).toBe(true);
    expect(await q.clean('completed')).toEqual(['a']);
    expect(await q.purgeDead(['x'])).toEqual(['x']);
    expect(await q.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: { a: 'A' } } });
    expect(await q.ack(await leaseOne(q, 'b'), 'B')).toBe(true);
    await leaseOne(q, 'p');
    expect(await q.childrenResults('p')).toEqual({ a: 'A', b: 'B' });
  });

  test('deleteQueue takes the whole flow: a leased child settles nothing and nothing runs', async () => {
    const q = res.queue<string, string>('deleted');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b' } }] });
    const a = await leaseOne(q, 'a');
    await q.deleteQueue({ tombstoneMs: 300 });
    expect(await q.ack(a, 'A')).toBe(false);
    await expect(q.lease()).rejects.toBeInstanceOf(QueueDeletedError);
    await waitUntil(async () => (await res.client().exists(q.keys.byName.meta)) === 0, 'the tombstone expired');
    expect(await q.lease()).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 0, waitingChildren: 0, dead: 0 });
  });

  test('a closed queue runs its flows to the end: children, then the parent, then it is drained', async () => {
    const q = res.queue<string, string>('closing');
    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', opts: { jobId: 'c' } }] });
    await q.closeQueue();
    expect(await q.ack(await leaseOne(q, 'c'), 'C')).toBe(true);
    expect(await q.ack(await leaseOne(q, 'p'), 'P')).toBe(true);
    expect(await q.lease({ blockMs: 5000 })).toEqual([]);
    expect(await q.counts()).toMatchObject({ completed: 2, waitingChildren: 0 });
  });
});
