/**
 * Replay safety: ioredis resends an unanswered command after a reconnect, so a script
 * may run twice for one request. These tests run the same transition twice by hand.
 */
import type { Queue } from '../../lib/index.js';
import { encodeRecord } from '../../lib/core/redis/record.js';
import type { ScriptName } from '../../lib/core/redis/script-code.js';
import { runScript } from '../../lib/core/redis/scripts.js';
import { leaseScript } from '../../lib/core/leases/scripts.js';
import { ackItem, nackItem, rejectItem, requeueItem, settleBatch, type SettleItem } from '../../lib/core/settles/settle-items.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';
import { internalsOf } from '../../lib/core/queue/internals.js';

const res = useRedis();

type Script = (keys: readonly string[], args: Array<string | number>) => Promise<unknown>;
function script(q: Queue<any, any>, name: ScriptName): Script {
  return (keys, args) => runScript(q.client, name, keys, args);
}

/** Raw relq_lease call exactly as Queue.leaseStep builds it. */
function leaseRaw(q: Queue<any, any>, reqId: string, count: number, leaseMs: number, items: SettleItem[] = []) {
  const args = leaseScript.encode({ events: '1', reqId, count, leaseMs, woken: false, worker: '', items: settleBatch(items), parentQueueOf: () => q.name });
  return script(q, 'lease')([...q.keys.call, q.keys.request(reqId)], args) as Promise<[number[], Array<string | number>]>;
}

describe('a settle repeated as a new request (not a replay)', () => {
  test('ack applied twice: true then false; completed once', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const item = ackItem(l!, JSON.stringify('r1'));
    expect(await internalsOf(q)!.settle([item])).toEqual([true]);
    expect(await internalsOf(q)!.settle([item])).toEqual([false]);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'r1' });
    expect(await obs.zcard(q.keys.byName.done)).toBe(1);
  });

  test('nack applied twice counts one failure and queues the job once', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 5 });
    const [l] = await q.lease();
    const item = nackItem(l!, new Error('boom'), 0);
    expect(await internalsOf(q)!.settle([item])).toEqual([true]);
    expect(await internalsOf(q)!.settle([item])).toEqual([false]);
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 1 });
    expect(await obs.llen(q.keys.byName.pending)).toBe(1);
  });

  test('nack with a delay applied twice: one delayed entry, one failure', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 5 });
    const [l] = await q.lease();
    const item = nackItem(l!, 'boom', 10_000);
    await internalsOf(q)!.settle([item]);
    await internalsOf(q)!.settle([item]);
    expect(await q.getJob(id)).toMatchObject({ state: 'delayed', failures: 1 });
    expect(await obs.zcard(q.keys.byName.delayed)).toBe(1);
  });

  test('requeue applied twice counts one requeue and queues the job once', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { priority: 4 });
    const [l] = await q.lease();
    const item = requeueItem(l!, 0, 'again');
    await internalsOf(q)!.settle([item]);
    await internalsOf(q)!.settle([item]);
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', requeues: 1, failures: 0 });
    expect(await obs.zcard(q.keys.byName.prio)).toBe(1);
  });

  test('reject applied twice: dead once', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const item = rejectItem(l!, 'no');
    await internalsOf(q)!.settle([item]);
    await internalsOf(q)!.settle([item]);
    expect((await q.getJob(id))!.state).toBe('dead');
    expect(await obs.zcard(q.keys.byName.dead)).toBe(1);
  });
});

describe('a replayed settle request (the same request id: a resend after a lost reply, or a retry)', () => {
  test('ack: true both times, completed once with its result', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const item = ackItem(l!, JSON.stringify('r1'));
    expect(await internalsOf(q)!.settle([item], 'req-ack')).toEqual([true]);
    expect(await internalsOf(q)!.settle([item], 'req-ack')).toEqual([true]);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'r1' });
    expect(await obs.zcard(q.keys.byName.done)).toBe(1);
    // a new request with the same lease is a repeat, not a replay
    expect(await internalsOf(q)!.settle([item])).toEqual([false]);
  });

  test('ack with keepCompletedMs 0 (the job is gone at once): still true on the replay', async () => {
    const q = res.queue<string>('q', { defaults: { keepCompletedMs: 0 } });
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const item = ackItem(l!, '');
    expect(await internalsOf(q)!.settle([item], 'req-k0')).toEqual([true]);
    expect(await internalsOf(q)!.settle([item], 'req-k0')).toEqual([true]);
    expect(await q.getJob(id)).toBeNull();
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(0);
  });

  test('nack, requeue and reject in one request: each answers as before and is applied once', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.addBulk(['n', 'q', 'r'].map((data) => ({ data, opts: { attempts: 5 } })));
    const [n, qq, r] = await q.lease({ count: 3 });
    const items = [nackItem(n!, 'boom', 0), requeueItem(qq!, 0, 'later'), rejectItem(r!, 'no')];
    expect(await internalsOf(q)!.settle(items, 'req-mix')).toEqual([true, true, true]);
    expect(await internalsOf(q)!.settle(items, 'req-mix')).toEqual([true, true, true]);
    expect(await q.getJob(n!.job.id)).toMatchObject({ state: 'pending', failures: 1 });
    expect(await q.getJob(qq!.job.id)).toMatchObject({ state: 'pending', requeues: 1 });
    expect(await q.getJob(r!.job.id)).toMatchObject({ state: 'dead' });
    expect(await obs.llen(q.keys.byName.pending)).toBe(2);
    expect(await obs.zcard(q.keys.byName.dead)).toBe(1);
  });

  test('a stale lease stays refused on the replay, and the replay does not settle the new holder', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 5 });
    const [old] = await q.lease({ leaseMs: 20 });
    await waitUntil(async () => (await q.sweep()).stalled === 1, 'the lease to expire and be swept');
    const [fresh] = await q.lease();
    expect(fresh!.job.id).toBe(id);
    const item = ackItem(old!, '');
    expect(await internalsOf(q)!.settle([item], 'req-stale')).toEqual([false]);
    expect(await internalsOf(q)!.settle([item], 'req-stale')).toEqual([false]);
    expect((await q.getJob(id))!.state).toBe('working');
    expect(await q.ack(fresh!)).toBe(true);
  });
});

describe('replayed lease', () => {
  test('the same reqId twice returns the same leases and leases nothing extra', async () => {
    const q = res.queue<number>();
    await q.addBulk([0, 1, 2, 3, 4].map((data) => ({ data })));
    await q.counts(); // installs the scripts on the client
    const [s1, h1] = await leaseRaw(q, 'req-A', 2, 5000);
    const [s2, h2] = await leaseRaw(q, 'req-A', 2, 5000);
    expect(s1).toEqual([]);
    expect(s2).toEqual([]);
    expect(h1.length).toBe(4 + 2 * 4);
    expect(h2.slice(4)).toEqual(h1.slice(4)); // ids, tokens, deadlines, records
    expect(await q.counts()).toMatchObject({ pending: 3, working: 2 });
    // the replayed tokens are the live ones: they can ack
    const leases = [];
    for (let i = 4; i < h1.length; i += 4) leases.push({ id: String(h1[i]), token: String(h1[i + 1]) });
    for (const { id, token } of leases) {
      const info = await q.getJob(id);
      expect(info!.state).toBe('working');
      expect(info!.leaseDeadline).toBe(Number(h1[leases.findIndex((x) => x.id === id) * 4 + 6]));
      expect(await internalsOf(q)!.settle([['a', id, token, '', '0 0']])).toEqual([true]);
    }
    // a fresh request id leases the next jobs
    const [, h3] = await leaseRaw(q, 'req-B', 10, 5000);
    expect((h3.length - 4) / 4).toBe(3);
  });

  test('a replay after one of its jobs was settled does not hand that job out again', async () => {
    const q = res.queue<number>();
    await q.addBulk([0, 1].map((data) => ({ data })));
    await q.counts();
    const [, h1] = await leaseRaw(q, 'req-C', 2, 5000);
    const firstId = String(h1[4]);
    expect(await internalsOf(q)!.settle([['a', firstId, String(h1[5]), '', '0 0']])).toEqual([true]);
    const [, h2] = await leaseRaw(q, 'req-C', 2, 5000);
    const ids = [];
    for (let i = 4; i < h2.length; i += 4) ids.push(String(h2[i]));
    expect(ids).not.toContain(firstId);
    expect(ids).toEqual([String(h1[8])]);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 1 });
  });

  test('a replayed lease step with settle items settles them once and answers as the first run did', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    await q.addBulk([0, 1, 2].map((data) => ({ data, opts: { attempts: 5 } })));
    const [l] = await q.lease();
    const items = [nackItem(l!, 'failed', 0)];
    const [s1, h1] = await leaseRaw(q, 'req-D', 1, 5000, items);
    const [s2, h2] = await leaseRaw(q, 'req-D', 1, 5000, items);
    expect(s1).toEqual([1]);
    expect(s2).toEqual([1]); // the replay answers what the first run answered
    expect(h2.slice(4)).toEqual(h1.slice(4));
    expect((await q.getJob(l!.job.id))!.failures).toBe(1);
    expect(await obs.llen(q.keys.byName.pending)).toBe(2);
  });
});

describe('replayed add', () => {
  function addArgs(items: Array<{ id: string; custom: boolean; data: unknown; priority?: number; due?: string }>) {
    const args: Array<string | number> = ['1', items.length];
    for (const it of items) {
      args.push(it.id, it.custom ? 1 : 0, encodeRecord({ t: Date.now(), a: 3, ...(it.priority ? { p: it.priority } : {}) }, JSON.stringify(it.data)), it.priority ?? 0, it.due ?? '');
    }
    args.push(0); // no jobs in the short form
    return args;
  }

  test('a generated id replayed: created both times, no duplicate anywhere', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    const add = script(q, 'add');
    const args = addArgs([
      { id: 'gen.1', custom: false, data: 'plain' },
      { id: 'gen.2', custom: false, data: 'prio', priority: 3 },
      { id: 'gen.3', custom: false, data: 'delayed', due: 'd60000' },
    ]);
    expect(await add(q.keys.call, args)).toEqual([1, 1, 1]);
    expect(await add(q.keys.call, args)).toEqual([1, 1, 1]);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(3);
    expect(await obs.llen(q.keys.byName.pending)).toBe(1);
    expect(await obs.zcard(q.keys.byName.prio)).toBe(1);
    expect(await obs.zcard(q.keys.byName.delayed)).toBe(1);
    expect((await q.lease({ count: 10 })).map((l) => l.job.data)).toEqual(['prio', 'plain']);
  });

  test('the public add path: the same generated-id request replayed creates one job', async () => {
    // Queue.add generates the id client-side, so its resend carries the same id.
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x');
    await q.counts();
    const again = (await script(q, 'add')(q.keys.call, addArgs([{ id, custom: false, data: 'x' }]))) as number[];
    expect(again).toEqual([1]);
    expect(await obs.llen(q.keys.byName.pending)).toBe(1);
  });
});
