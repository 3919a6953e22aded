/**
 * promote(id), changePriority(id, priority) and the lifo add option: where a job stands in
 * the lease order afterwards.
 */
import { ValidationError } from '../../lib/index.js';
import { useRedis } from '../support/engine-harness.js';
import { booksAgree } from '../support/job-indexes.js';

const res = useRedis();

const leaseOrder = async (q: ReturnType<typeof res.queue>, n = 20): Promise<string[]> => (await q.lease({ count: n })).map((l) => l.job.id);

describe('promote', () => {
  test('a delayed job becomes pending now, in its priority; nextDue follows', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('p', { jobId: 'p' });
    await q.add('hi', { jobId: 'hi', delayMs: 60_000, priority: 5 });
    await q.add('later', { jobId: 'later', delayMs: 120_000 });
    expect(await q.promote('hi')).toBe(true);
    expect((await q.getJob('hi'))!.state).toBe('pending');
    await booksAgree(obs, q);
    expect(await leaseOrder(q)).toEqual(['hi', 'p']);
    expect(await q.promote('hi')).toBe(false); // leased now, not delayed
    expect(await q.promote('p')).toBe(false);
    expect(await q.promote('missing')).toBe(false);
    expect(await q.promote('later')).toBe(true);
    expect(await obs.hexists(q.keys.byName.meta, 'nextDue')).toBe(0);
  });

  test('a grouped delayed job joins its group', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('g', { jobId: 'g', group: 'tenant', delayMs: 60_000 });
    expect(await q.promote('g')).toBe(true);
    await booksAgree(obs, q);
    expect((await q.lease())[0]!.job).toMatchObject({ id: 'g', group: 'tenant' });
  });
});

describe('changePriority', () => {
  test('a pending job moves behind the jobs of its new priority', async () => {
    const q = res.queue<string>();
    for (const [id, priority] of [['a', 0], ['b', 0], ['c', 2], ['d', 0], ['e', -1]] as const) await q.add(id, { jobId: id, priority });
    expect(await q.changePriority('d', 2)).toBe(true); // behind c
    expect(await q.changePriority('a', -1)).toBe(true); // behind e
    expect(await q.changePriority('c', 0)).toBe(true); // to the list's tail
    expect(await q.changePriority('b', 0)).toBe(true); // unchanged: keeps its place
    expect((await q.getJobs('pending')).map((j) => [j.id, j.priority])).toEqual([
      ['d', 2],
      ['b', 0],
      ['c', 0],
      ['e', -1],
      ['a', -1],
    ]);
    expect(await leaseOrder(q)).toEqual(['d', 'b', 'c', 'e', 'a']);
  });

  test('a delayed, leased or dead job keeps the new priority for when it is pending again', async () => {
    const q = res.queue<string>();
    for (const id of ['p1', 'p2']) await q.add(id, { jobId: id });
    await q.add('delayed', { jobId: 'delayed', delayMs: 60_000 });
    await q.add('leased', { jobId: 'leased', priority: 9 });
    await q.add('dead', { jobId: 'dead', priority: 8, attempts: 1 });
    const [leased] = await q.lease();
    const [dying] = await q.lease();
    await q.nack(dying!, { error: 'x' });
    expect(leased!.job.id).toBe('leased');

    expect(await q.changePriority('delayed', 5)).toBe(true);
    expect(await q.changePriority('leased', 4)).toBe(true);
    expect(await q.changePriority('dead', 3)).toBe(true);
    expect(await q.getJob('delayed')).toMatchObject({ state: 'delayed', priority: 5 });
    expect(await q.getJob('leased')).toMatchObject({ state: 'working', priority: 4 });

    await q.promote('delayed');
    await q.requeue(leased!);
    await q.retryDead(['dead']);
    expect(await leaseOrder(q)).toEqual(['delayed', 'leased', 'dead', 'p1', 'p2']);
  });

  test('a completed or unknown job: false, nothing written; a grouped job: ValidationError', async () => {
    const q = res.queue<string>();
    await q.add('c', { jobId: 'c' });
    await q.ack((await q.lease())[0]!);
    expect(await q.changePriority('c', 3)).toBe(false);
    expect(await q.changePriority('nope', 3)).toBe(false);
    await q.add('g', { jobId: 'g', group: 'x' });
    const before = await res.client().hget(q.keys.byName.jobs, 'g');
    const err = await q.changePriority('g', 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'priority' });
    expect(await res.client().hget(q.keys.byName.jobs, 'g')).toBe(before);
  });
});

describe('lifo', () => {
  test('a lifo job goes to the head of its priority; the last lifo first', async () => {
    const q = res.queue<string>();
    await q.add('a', { jobId: 'a' });
    await q.add('b', { jobId: 'b' });
    await q.add('L1', { jobId: 'L1', lifo: true });
    await q.add('L2', { jobId: 'L2', lifo: true });
    await q.add('h1', { jobId: 'h1', priority: 3 });
    await q.add('h2', { jobId: 'h2', priority: 3 });
    await q.add('hL', { jobId: 'hL', priority: 3, lifo: true });
    await q.add('top', { jobId: 'top', priority: 4 });
    await q.add('lowL', { jobId: 'lowL', priority: -2, lifo: true });
    await q.add('low', { jobId: 'low', priority: -1 });
    const expected = ['top', 'hL', 'h1', 'h2', 'L2', 'L1', 'a', 'b', 'low', 'lowL'];
    expect((await q.getJobs('pending')).map((j) => j.id)).toEqual(expected);
    expect(await leaseOrder(q)).toEqual(expected);
  });

  test('addBulk with lifo jobs, and a grouped lifo job heads its group', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.addBulk([{ data: 'f1' }, { data: 'x', opts: { jobId: 'l1', lifo: true } }, { data: 'y', opts: { jobId: 'l2', lifo: true } }]);
    const order = (await q.getJobs('pending')).map((j) => j.id);
    expect(order.slice(0, 2)).toEqual(['l2', 'l1']);
    await q.lease({ count: 10 });

    await q.add('g1', { jobId: 'g1', group: 'g' });
    await q.add('g2', { jobId: 'g2', group: 'g' });
    await q.add('gL', { jobId: 'gL', group: 'g', lifo: true });
    await booksAgree(obs, q);
    expect(await leaseOrder(q)).toEqual(['gL', 'g1', 'g2']);
  });

  test('a bounded queue takes lifo jobs through the managed path', async () => {
    const q = res.queue<string>('b', { bound: 10 });
    await q.add('a', { jobId: 'a' });
    await q.add('L', { jobId: 'L', lifo: true });
    expect(await leaseOrder(q)).toEqual(['L', 'a']);
  });
});
