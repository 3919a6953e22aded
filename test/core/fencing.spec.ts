import type { Lease, Queue } from '../../lib/index.js';
import { useRedis, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

/** One job leased twice: `old` expired and was swept, `cur` holds it now (attempt 2). */
async function twoHolders(q: Queue<string, string>) {
  const { id } = await q.add('x', { attempts: 5, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  const [old] = await q.lease({ leaseMs: 100 });
  await untilRedisTime(res.client(), old!.deadline, 'the first lease to run out');
  expect((await q.sweep()).stalled).toBe(1);
  const [cur] = await q.lease({ leaseMs: 5000 });
  expect(cur!.job.id).toBe(id);
  expect(cur!.job.attempt).toBe(2);
  expect(cur!.token).not.toBe(old!.token);
  return { id, old: old!, cur: cur! };
}

type Op = (q: Queue<string, string>, l: Lease<string>) => Promise<boolean>;
const ops: Array<[string, Op]> = [
  ['ack', (q, l) => q.ack(l, 'by ' + l.token)],
  ['nack', (q, l) => q.nack(l, { error: 'nacked', delayMs: 0 })],
  ['touch', (q, l) => q.touch(l, 60_000)],
  ['requeue', (q, l) => q.requeue(l)],
  ['reject', (q, l) => q.reject(l, 'rejected')],
];

describe('fencing', () => {
  test('after expiry, every operation with the old token is false and changes nothing', async () => {
    const q = res.queue<string, string>();
    const { id, old, cur } = await twoHolders(q);
    const snapshot = await q.getJob(id);
    const counts = await q.counts();
    expect(snapshot).toMatchObject({ state: 'working', failures: 1, requeues: 0, leaseDeadline: cur.deadline });
    for (const [name, op] of ops) {
      expect([name, await op(q, old)]).toEqual([name, false]);
      expect(await q.getJob(id)).toEqual(snapshot);
      expect(await q.counts()).toEqual(counts);
    }
    expect(await q.ack(cur, 'current')).toBe(true);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'current' });
    for (const [name, op] of ops) expect([name, await op(q, old)]).toEqual([name, false]);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'current' });
  });

  test.each(ops)('the current holder can still %s after the old holder was refused', async (name, op) => {
    const q = res.queue<string, string>();
    const { id, old, cur } = await twoHolders(q);
    for (const [, o] of ops) expect(await o(q, old)).toBe(false);
    expect(await op(q, cur)).toBe(true);
    const expected = { ack: 'completed', nack: 'pending', touch: 'working', requeue: 'pending', reject: 'dead' }[name];
    expect((await q.getJob(id))!.state).toBe(expected);
  });

  test('the old holder racing the new one: only the new one wins', async () => {
    const q = res.queue<string, string>();
    const other = res.twin<string, string>(q);
    const { id, old, cur } = await twoHolders(q);
    const [a, b] = await Promise.all([other.ack(old, 'old'), q.ack(cur, 'new')]);
    expect([a, b]).toEqual([false, true]);
    expect((await q.getJob(id))!.result).toBe('new');
  });

  test('every lease gets a new token', async () => {
    const q = res.queue<string>();
    await q.add('x');
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const [l] = await q.lease();
      tokens.add(l!.token);
      await q.requeue(l!);
    }
    expect(tokens.size).toBe(5);
  });

  test('a forged token, or a token of another job, settles nothing', async () => {
    const q = res.queue<string>();
    await q.addBulk([{ data: 'a' }, { data: 'b' }]);
    const [a, b] = await q.lease({ count: 2 });
    expect(await q.ack({ ...a!, token: 'forged' })).toBe(false);
    expect(await q.ack({ ...a!, token: '' })).toBe(false);
    expect(await q.ack({ ...a!, token: b!.token })).toBe(false);
    expect(await q.reject({ ...b!, token: a!.token })).toBe(false);
    expect(await q.counts()).toMatchObject({ working: 2, completed: 0, dead: 0 });
    expect(await q.ackBatch([a!, b!])).toEqual([true, true]);
  });
});
