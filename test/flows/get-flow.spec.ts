/**
 * Reading a flow on a real Redis, through the public API: getFlow() answers the tree below a
 * job with each job's queue and state, across queues, as deep and as wide as asked;
 * getDependencies() pages a parent's children in the flow's order.
 */
import { ValidationError, type Lease, type Queue } from '../../lib/index.js';
import { useRedis } from '../support/engine-harness.js';

const res = useRedis();

async function leaseOne(q: Queue<string, string>, id: string): Promise<Lease<string>> {
  const [l] = await q.lease();
  expect(l?.job.id).toBe(id);
  return l!;
}

test('getFlow: the tree across queues with each state; depth and maxChildren bound it, total tells what is left out', async () => {
  const a = res.queue<string, string>('{gf}-a');
  const b = res.queue<string, string>('{gf}-b', { prefix: a.prefix });
  await a.addFlow({
    data: 'root',
    opts: { jobId: 'root' },
    children: [
      { data: 'm', queue: b.name, opts: { jobId: 'm' }, children: [{ data: 'l1', opts: { jobId: 'l1' } }, { data: 'l2', queue: a.name, opts: { jobId: 'l2', delayMs: 60_000 } }] },
      { data: 'k', opts: { jobId: 'k' } },
    ],
  });
  expect(await a.ack(await leaseOne(a, 'k'), 'K')).toBe(true);
  expect(await a.getFlow('root')).toEqual({
    id: 'root',
    queue: a.name,
    state: 'waiting-children',
    total: 2,
    children: [
      {
        id: 'm',
        queue: b.name,
        state: 'waiting-children',
        total: 2,
        children: [
          { id: 'l1', queue: b.name, state: 'pending', total: 0, children: [] },
          { id: 'l2', queue: a.name, state: 'delayed', total: 0, children: [] },
        ],
      },
      { id: 'k', queue: a.name, state: 'completed', total: 0, children: [] },
    ],
  });
  const shallow = await a.getFlow('root', { depth: 1, maxChildren: 1 });
  expect(shallow).toEqual({ id: 'root', queue: a.name, state: 'waiting-children', total: 2, children: [{ id: 'm', queue: b.name, state: 'waiting-children', total: 2, children: [] }] });
  expect(await a.getFlow('root', { depth: 0 })).toMatchObject({ total: 2, children: [] });
  // from the middle, in its own queue
  expect((await b.getFlow('m'))?.children.map((c) => [c.id, c.queue])).toEqual([['l1', b.name], ['l2', a.name]]);
  expect(await a.getFlow('nope')).toBeNull();
  const plain = await a.add('x', { jobId: 'plain' });
  expect(await a.getFlow(plain.id)).toEqual({ id: 'plain', queue: a.name, state: 'pending', total: 0, children: [] });
  // a child gone shows as null
  expect(await b.remove('l1')).toBe(true);
  expect((await b.getFlow('m'))?.children[0]).toMatchObject({ id: 'l1', state: null });
  await expect(a.getFlow('root', { depth: -1 })).rejects.toBeInstanceOf(ValidationError);
  await expect(a.getFlow('root', { maxChildren: 0 })).rejects.toBeInstanceOf(ValidationError);
  await expect(a.getFlow('root', { width: 3 } as never)).rejects.toBeInstanceOf(ValidationError);
});

test('getDependencies pages a parent\'s children in the flow\'s order', async () => {
  const q = res.queue<string, string>('deps');
  const other = res.queue<string, string>('deps-other', { prefix: q.prefix });
  await q.addFlow({
    data: 'p',
    opts: { jobId: 'p' },
    children: [...['c0', 'c1', 'c2', 'c3'].map((id) => ({ data: id, opts: { jobId: id } })), { data: 'c4', queue: other.name, opts: { jobId: 'c4' } }],
  });
  expect(await q.getDependencies('p', { offset: 1, limit: 2 })).toEqual({
    state: 'waiting-children',
    total: 5,
    children: [
      { id: 'c1', queue: q.name, state: 'pending' },
      { id: 'c2', queue: q.name, state: 'pending' },
    ],
  });
  expect((await q.getDependencies('p', { offset: 4 })).children).toEqual([{ id: 'c4', queue: other.name, state: 'pending' }]);
  expect((await q.getDependencies('p')).children).toHaveLength(5);
  expect(await q.getDependencies('c0')).toEqual({ state: 'pending', total: 0, children: [] });
  expect(await q.getDependencies('nope')).toEqual({ state: null, total: 0, children: [] });
  await expect(q.getDependencies('p', { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
});

test("a parent's list of children goes with it", async () => {
  const q = res.queue<string, string>('kids-gone');
  await q.addFlow({ data: 'p', opts: { jobId: 'p', keepCompletedMs: 0 }, children: [{ data: 'c', opts: { jobId: 'c' } }] });
  expect(await q.ack(await leaseOne(q, 'c'), 'C')).toBe(true);
  expect(await q.ack(await leaseOne(q, 'p'), 'P')).toBe(true);
  expect(await res.client().exists(q.keys.derived.kids('p'))).toBe(0);
  await q.addFlow({ data: 'p', opts: { jobId: 'p2' }, children: [{ data: 'c', opts: { jobId: 'c2', delayMs: 60_000 } }] });
  expect(await q.remove('p2')).toBe(true);
  expect(await res.client().exists(q.keys.derived.kids('p2'))).toBe(0);
});
