/**
 * Job management on a Redis Cluster: every call's keys (group lists included) share the
 * queue's slot, for queues on every master; job edits and step jobs too; a cancel's notice
 * reaches the worker through the sharded channel of that slot; a metrics history lives in it too.
 */
import type { Cluster } from 'ioredis';
import { CancelledError, Queue, Worker, type QueueEvent } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { waitUntil } from '../support/wait.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
}, 60_000);
afterAll(() => cluster?.stop());

// Names whose slots fall on all three masters (checked below).
const NAMES = Array.from({ length: 9 }, (_, i) => `mq-${i}-${'y'.repeat(i % 4)}`);

test('getJobs, remove, promote, changePriority, lifo, clean, retryDead filter and drain, for queues on every master', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  for (const name of NAMES) {
    const q = new Queue<string, string>(name, { connection: client, bound: 20, groupConcurrency: 2 });
    for (const [id, opts] of [
      ['a', {}],
      ['b', { priority: 2 }],
      ['L', { lifo: true }],
      ['d', { delayMs: 60_000 }],
      ['x', { attempts: 1, name: 'fails', priority: 9 }],
    ] as const) {
      await q.add(id, { jobId: id, ...opts });
    }
    expect((await q.getJobs('pending', { order: 'desc' })).map((j) => j.id)).toEqual(['a', 'L', 'b', 'x']);
    expect(await q.promote('d')).toBe(true);
    expect(await q.changePriority('a', 5)).toBe(true);
    const [dying] = await q.lease();
    expect(dying!.job.id).toBe('x');
    await q.nack(dying!, { error: 'boom' });
    const [held] = await q.lease();
    expect(held!.job.id).toBe('a');
    expect(await q.remove('a', { force: true })).toBe(true);
    expect(await q.ack(held!)).toBe(false);
    expect(await q.remove('b')).toBe(true);
    expect(await q.retryDead({ name: 'fails', limit: 5 })).toEqual(['x']);
    const [again] = await q.lease();
    await q.ack(again!, 'ok');
    expect(await q.clean('completed')).toEqual(['x']);
    await q.add('g', { jobId: 'g', group: 'tenant' }); // its list is a derived key of the same slot
    expect((await q.getJobs('pending')).map((j) => j.id)).toEqual(['L', 'd', 'g']);
    expect(await q.drain()).toBe(3); // L, d and g
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, working: 0, completed: 0, dead: 0 });
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('updateData, changeDelay, changePriority lifo and a step job moved by its handler, for queues on every master', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    // grouped: the move's group books (derived keys) are in the queue's slot too
    const q = new Queue<{ step: number }, string>(name, { connection: client, prefix: 'edits', groupConcurrency: 1 });
    await q.add({ step: 1 }, { jobId: 'a' });
    await q.add({ step: 1 }, { jobId: 'b' });
    await q.add({ step: 1 }, { jobId: 'later', delayMs: 60_000 });
    await q.add({ step: 1 }, { jobId: 's', group: 'tenant' });
    expect(await q.changePriority('b', 0, { lifo: true })).toBe(true);
    expect(await q.updateData('b', { step: 2 })).toBe(true);
    expect(await q.changeDelay('later', 0)).toBe(true);
    const leased = [];
    while (leased.length < 4) leased.push(...(await q.lease({ count: 4 - leased.length })));
    // the ungrouped jobs in their order (the group takes its turn in the rotation)
    expect(leased.filter((l) => l.job.id !== 's').map((l) => [l.job.id, l.job.data.step])).toEqual([
      ['b', 2],
      ['a', 1],
      ['later', 1],
    ]);
    const step = leased.find((l) => l.job.id === 's')!;
    expect(await q.updateData(step, { step: 2 })).toBe(true);
    expect(await q.moveToDelayed(step, 0)).toBe(true);
    const [next] = await q.lease();
    expect(next!.job).toMatchObject({ id: 's', data: { step: 2 }, attempt: 1 });
    expect(await q.ack(next!, 'done')).toBe(true);
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('cancel, for queues on every master: a waiting job removed, a running Worker handler aborted at once by the notice on its slot', async () => {
  const client = cluster.client();
  // one name per master (not NAMES: the test above deleted those queues, whose tombstones stop workers for a while)
  const names: string[] = [];
  const masters = new Set<number>();
  for (const n of Array.from({ length: 12 }, (_, i) => `cancel-${i}`)) {
    const master = Math.floor(Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`)) / 5462);
    if (!masters.has(master)) (masters.add(master), names.push(n));
  }
  expect(names).toHaveLength(3);
  for (const name of names) {
    const q = new Queue<string, string>(name, { connection: client });
    const reasons: unknown[] = [];
    let started = false;
    const w = new Worker<string, string>(q, async (job) => {
      started = true;
      await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
      reasons.push(job.signal.reason);
      return 'late';
    }); // the default 30 s lease: only the notice can abort it this soon
    try {
      await waitUntil(async () => (await shardSubscribers(client, q.keys.derived.cancels)) === 1, 'the worker listens to cancels');
      await q.add('waiting', { jobId: 'waiting', delayMs: 60_000 });
      await q.add('running', { jobId: 'running' });
      await waitUntil(() => started, 'the handler runs');
      expect(await q.cancel('waiting')).toBe('removed');
      expect(await q.cancel('running', { reason: 'cluster' })).toBe('dead');
      await waitUntil(() => reasons.length === 1, 'the handler is aborted', 2000);
      expect(reasons[0]).toBeInstanceOf(CancelledError);
      expect(reasons[0]).toMatchObject({ jobId: 'running', reason: 'cluster' });
      expect(await q.getJob('running')).toMatchObject({ state: 'dead', lastError: 'CancelledError: job running was cancelled: cluster' });
      expect(await q.counts()).toMatchObject({ delayed: 0, working: 0, dead: 1 });
      await q.deleteQueue();
    } finally {
      await w.close({ drainTimeoutMs: 0 });
      await q.close();
    }
  }
}, 60_000);

/** Subscribers of a sharded channel: on the master that owns its slot (the others count none). */
async function shardSubscribers(client: Cluster, channel: string): Promise<number> {
  let n = 0;
  for (const node of client.nodes('master')) n += Number(((await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]);
  return n;
}

test('getCountsPerPriority, getJobs over several states, processedOn, keepLogs, clearLogs and the drained, cleaned and named added events, on every master', async () => {
  const client = cluster.client();
  const byMaster = new Map<number, string>();
  for (const name of NAMES) {
    const slot = Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${name}}`));
    if (!byMaster.has(Math.floor(slot / 5462))) byMaster.set(Math.floor(slot / 5462), name);
  }
  expect(byMaster.size).toBe(3);
  for (const name of byMaster.values()) {
    const q = new Queue<string, string>(`getters-${name}`, { connection: client, maxLogLines: 5 });
    const got: QueueEvent[] = [];
    const sub = q.events().subscribe((e) => got.push(e));
    // subscribed once a probe's 'added' comes through
    for (let i = 0; !got.some((e) => e.id === 'probe'); i++) {
      expect(i).toBeLessThan(100);
      await q.add('probe', { jobId: 'probe', delayMs: 60_000 });
      await new Promise((r) => setTimeout(r, 50));
      await q.remove('probe');
    }
    await q.add('a', { jobId: 'a', name: 'first', keepLogs: 2 });
    await q.add('b', { jobId: 'b', priority: 4 });
    await q.add('d', { jobId: 'd', delayMs: 60_000 });
    expect(await q.getCountsPerPriority([0, 4, -1])).toEqual({ 0: 1, 4: 1, [-1]: 0 });
    expect((await q.getJobs(['delayed', 'pending'])).map((j) => [j.id, j.state])).toEqual([['d', 'delayed'], ['b', 'pending'], ['a', 'pending']]);
    const leases = await q.lease({ count: 5 }); // b and a: the last pending jobs
    for (const line of ['1', '2', '3']) await q.log(leases[1]!, line);
    for (const l of leases) await q.ack(l, 'ok');
    expect(await q.getJob('a')).toMatchObject({ state: 'completed', logs: ['2', '3'], processedOn: leases[1]!.job.leasedAt });
    expect(await q.clearLogs('a', { keep: 1 })).toBe(1);
    expect((await q.clean('completed')).sort()).toEqual(['a', 'b']);
    await q.add('marker', { jobId: 'marker', delayMs: 60_000 });
    for (let i = 0; !got.some((e) => e.id === 'marker'); i++) {
      expect(i).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(got.find((e) => e.type === 'added' && e.id === 'a')).toMatchObject({ name: 'first' });
    expect(got.filter((e) => ['drained', 'cleaned'].includes(e.type)).map(({ type, count }) => ({ type, count }))).toEqual([
      { type: 'drained', count: undefined },
      { type: 'cleaned', count: 2 },
    ]);
    sub.unsubscribe();
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('a metrics history written by a worker and read back, deleted with its queue, for queues on every master', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    const q = new Queue<string, string>(`mh-${name}`, { connection: client, metrics: { keepMinutes: 5 }, defaults: { attempts: 2, backoff: 0 } });
    await q.addBulk([{ data: 'ok' }, { data: 'ok' }, { data: 'fail' }]);
    const w = new Worker(q, async (job) => {
      if (job.data === 'fail') throw new Error('no');
      return 'done';
    });
    await waitUntil(async () => {
      const t = (await q.getMetrics()).total;
      return t.completed === 2 && t.dead === 1;
    }, `the history of ${name}`);
    await w.close();
    const { total, keepMinutes } = await q.getMetrics();
    expect({ keepMinutes, completed: total.completed, failed: total.failed, dead: total.dead, timed: total.runTime.count }).toEqual({
      keepMinutes: 5,
      completed: 2,
      failed: 1,
      dead: 1,
      timed: 4,
    });
    await q.deleteQueue({ tombstoneMs: 1 });
    expect((await q.getMetrics()).total.completed).toBe(0);
    await q.close();
  }
}, 60_000);
