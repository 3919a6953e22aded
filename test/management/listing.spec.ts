/**
 * getJobs(state, { start, end, order }): pages of every state, in both orders.
 */
import type { JobInfo, JobState, Queue } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis } from '../support/engine-harness.js';

const res = useRedis();

const ids = (jobs: Array<JobInfo<unknown, unknown>>): string[] => jobs.map((j) => j.id);

/** Every page of size `size` of `state` in `order`, concatenated. */
async function allPages(q: Queue, state: JobState, order: 'asc' | 'desc', size: number): Promise<string[]> {
  const out: string[] = [];
  for (let start = 0; ; start += size) {
    const page = await q.getJobs(state, { start, end: start + size - 1, order });
    out.push(...ids(page));
    if (page.length < size) return out;
  }
}

/** Pages of sizes 1, 2 and 3 in both orders all give `expected` (asc) and its reverse (desc). */
async function expectPages(q: Queue, state: JobState, expected: string[]): Promise<void> {
  expect(ids(await q.getJobs(state))).toEqual(expected);
  for (const size of [1, 2, 3]) {
    expect(await allPages(q, state, 'asc', size)).toEqual(expected);
    expect(await allPages(q, state, 'desc', size)).toEqual([...expected].reverse());
  }
}

describe('getJobs', () => {
  test('pending: lease order (priority high to low, FIFO within one, then groups by name), both orders', async () => {
    const q = res.queue<string>();
    const add = async (data: string, opts = {}) => (await q.add(data, { jobId: data, ...opts })).id;
    await add('p0-a');
    await add('low', { priority: -3 });
    await add('g-b1', { group: 'b' });
    await add('high5', { priority: 5 });
    await add('g-a1', { group: 'a' });
    await add('p0-b');
    await add('high1', { priority: 1 });
    await add('g-b2', { group: 'b' });
    await add('high5-2', { priority: 5 });
    const expected = ['high5', 'high5-2', 'high1', 'p0-a', 'p0-b', 'low', 'g-a1', 'g-b1', 'g-b2'];
    await expectPages(q, 'pending', expected);
    const page = await q.getJobs('pending', { start: 1, end: 2 });
    expect(page.map((j) => [j.id, j.state, j.priority, j.data])).toEqual([
      ['high5-2', 'pending', 5, 'high5-2'],
      ['high1', 'pending', 1, 'high1'],
    ]);
    expect((await q.getJobs('pending', { start: 6, end: 6 }))[0]).toMatchObject({ id: 'g-a1', group: 'a' });
  });

  test('an ungrouped queue lists exactly its lease order', async () => {
    const q = res.queue<number>();
    for (let i = 0; i < 7; i++) await q.add(i, { jobId: `j${i}`, priority: [0, 2, 0, -1, 2, 0, 1][i] });
    const listed = ids(await q.getJobs('pending', { end: 99 }));
    const leased = (await q.lease({ count: 10 })).map((l) => l.job.id);
    expect(listed).toEqual(leased);
    expect(await q.getJobs('pending')).toEqual([]);
  });

  test('delayed by due time, working by deadline, dead by time of death, completed by retention end', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    for (const [id, delayMs] of [['d3', 30_000], ['d1', 10_000], ['d2', 20_000]] as const) await q.add(id, { jobId: id, delayMs });
    await expectPages(q, 'delayed', ['d1', 'd2', 'd3']);
    expect((await q.getJobs('delayed'))[0]).toMatchObject({ id: 'd1', state: 'delayed', data: 'd1' });
    expect((await q.getJobs('delayed'))[0]!.runAt).toBeGreaterThan(await redisNow(obs));

    for (const id of ['w1', 'w2', 'w3', 'x1', 'x2']) await q.add(id, { jobId: id, attempts: 1 });
    for (const [id, keepCompletedMs] of [['c1', 30_000], ['c2', 10_000], ['c3', 20_000]] as const) await q.add(id, { jobId: id, keepCompletedMs });
    const [w1] = await q.lease({ leaseMs: 30_000 });
    const [w2] = await q.lease({ leaseMs: 10_000 });
    const [w3] = await q.lease({ leaseMs: 20_000 });
    await expectPages(q, 'working', [w2!.job.id, w3!.job.id, w1!.job.id]);
    expect((await q.getJobs('working'))[0]).toMatchObject({ id: 'w2', state: 'working', leaseDeadline: w2!.deadline });

    for (const id of ['x1', 'x2']) {
      const [l] = await q.lease();
      expect(l!.job.id).toBe(id);
      await q.nack(l!, { error: `boom ${id}` });
      await untilRedisTime(obs, await redisNow(obs)); // distinct times of death
    }
    await expectPages(q, 'dead', ['x1', 'x2']);
    expect((await q.getJobs('dead'))[1]).toMatchObject({ id: 'x2', state: 'dead', lastError: 'boom x2' });

    for (const l of await q.lease({ count: 3 })) await q.ack(l, `r-${l.job.id}`);
    await expectPages(q, 'completed', ['c2', 'c3', 'c1']); // retention 10 s, 20 s, 30 s
    expect((await q.getJobs('completed', { order: 'desc' }))[0]).toMatchObject({ id: 'c1', state: 'completed', result: 'r-c1' });
  });

  test('completed jobs past their retention are left out before a sweep removes them', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('short', { jobId: 'short', keepCompletedMs: 50 });
    await q.add('long', { jobId: 'long' });
    for (const l of await q.lease({ count: 2 })) await q.ack(l, l.job.id);
    const short = (await q.getJobs('completed')).find((j) => j.id === 'short')!;
    await untilRedisTime(obs, short.retainedUntil!);
    expect(ids(await q.getJobs('completed'))).toEqual(['long']);
    expect(ids(await q.getJobs('completed', { order: 'desc' }))).toEqual(['long']);
  });

  test('several states: positions count through them in the order given, each state in the order asked for', async () => {
    const q = res.queue<string>();
    await q.add('x', { jobId: 'x', attempts: 1 });
    await q.nack((await q.lease())[0]!, { error: 'boom' }); // x dead
    for (const [id, opts] of [['p1', {}], ['hi', { priority: 3 }], ['g1', { group: 'g' }], ['p2', {}]] as const) await q.add(id, { jobId: id, ...opts });
    for (const [id, delayMs] of [['d2', 20_000], ['d1', 10_000]] as const) await q.add(id, { jobId: id, delayMs });
    const states: JobState[] = ['pending', 'dead', 'delayed'];
    const single = await Promise.all(states.map(async (state) => ({ state, asc: ids(await q.getJobs(state)) })));
    const all = single.flatMap((s) => s.asc);
    expect(all).toEqual(['hi', 'p1', 'p2', 'g1', 'x', 'd1', 'd2']);
    const allDesc = single.flatMap((s) => [...s.asc].reverse());
    for (const size of [1, 2, 3, 5]) {
      for (const [order, expected] of [['asc', all], ['desc', allDesc]] as const) {
        const got: string[] = [];
        for (let start = 0; start < 9; start += size) got.push(...ids(await q.getJobs(states, { start, end: start + size - 1, order })));
        expect([size, order, got]).toEqual([size, order, expected]);
      }
    }
    // each job with its own state; a page across the boundary of two states
    const page = await q.getJobs(states, { start: 3, end: 5 });
    expect(page.map((j) => [j.id, j.state])).toEqual([['g1', 'pending'], ['x', 'dead'], ['d1', 'delayed']]);
    expect(page[2]!.runAt).toBeGreaterThan(0);
    expect(ids(await q.getJobs(['delayed', 'pending'], { end: 2 }))).toEqual(['d1', 'd2', 'hi']);
    // one state in an array is the single-state call
    expect(await q.getJobs(['pending'])).toEqual(await q.getJobs('pending'));
  });

  test('pages past the end are empty; a page is clipped at the end', async () => {
    const q = res.queue<number>();
    for (let i = 0; i < 3; i++) await q.add(i, { jobId: `j${i}` });
    expect(await q.getJobs('pending', { start: 3, end: 10 })).toEqual([]);
    expect(ids(await q.getJobs('pending', { start: 2, end: 10 }))).toEqual(['j2']);
    expect(ids(await q.getJobs('pending', { start: 2, end: 10, order: 'desc' }))).toEqual(['j0']);
    expect(await q.getJobs('dead')).toEqual([]);
  });
});
