import type { Redis } from 'ioredis';
import type { Lease, Queue } from '../../lib/index.js';
import { runScript } from '../../lib/core/redis/scripts.js';
import { useRedis, redisNow, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

/** Waits until every one of `leases` has run out by the Redis clock. */
function pastDeadlines(obs: Redis, leases: ReadonlyArray<Lease<any>>): Promise<void> {
  return untilRedisTime(obs, Math.max(...leases.map((l) => l.deadline)), 'the leases to run out');
}

/** Writes one job record as is, through the engine's own add script (no JS validation). */
function rawAdd(q: Queue<any, any>, id: string, record: string): Promise<unknown> {
  return runScript(q.client, 'add', q.keys.call, ['1', 1, id, 0, record, 0, '']);
}

const zero = { stalled: 0, deadLettered: 0, promoted: 0, completedRemoved: 0, deadRemoved: 0, dedupForgotten: 0 };

describe('sweep', () => {
  test('on an empty queue: all zero', async () => {
    const q = res.queue();
    expect(await q.sweep()).toEqual(zero);
  });

  test('an expired lease goes back to pending with failures + 1; attempt 2 on re-lease', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 3 });
    const [l] = await q.lease({ leaseMs: 1000 });
    expect(await q.sweep()).toEqual(zero); // not expired yet
    await pastDeadlines(obs, [l!]);
    expect(await q.sweep()).toEqual({ ...zero, stalled: 1 });
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 1, lastError: 'lease expired' });
    expect(await q.sweep()).toEqual(zero); // nothing twice
    const [again] = await q.lease({ leaseMs: 5000 });
    expect(again!.job).toMatchObject({ id, attempt: 2, lastError: 'lease expired' });
    expect(again!.token).not.toBe(l!.token);
    expect(await q.ack(again!)).toBe(true);
  });

  test('an expired lease past the attempt limit is dead-lettered', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 2 });
    for (let i = 1; i <= 2; i++) {
      const [l] = await q.lease({ leaseMs: 50 });
      expect(l!.job.attempt).toBe(i);
      await pastDeadlines(obs, [l!]);
      expect(await q.sweep()).toEqual({ ...zero, stalled: 1, deadLettered: i === 2 ? 1 : 0 });
    }
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', failures: 2, lastError: 'lease expired' });
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, dead: 1 });
  });

  test('live leases are left alone', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.addBulk([{ data: 'short' }, { data: 'long', opts: { leaseMs: 10_000 } }]);
    const leases = await q.lease({ count: 2, leaseMs: 50 });
    await pastDeadlines(obs, leases.filter((l) => l.job.data === 'short'));
    expect((await q.sweep()).stalled).toBe(1);
    expect(await q.counts()).toMatchObject({ pending: 1, working: 1 });
  });

  test('bounded by limit per call: stalled, promoted and retention', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    await q.addBulk([0, 1, 2, 3, 4].map((data) => ({ data })));
    await pastDeadlines(obs, await q.lease({ count: 5, leaseMs: 50 }));
    await q.addBulk([5, 6, 7, 8, 9].map((data) => ({ data, opts: { delayMs: 50 } })));
    await untilRedisTime(obs, (await redisNow(obs)) + 50, 'the delayed jobs to be due');
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 2, promoted: 2 });
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 2, promoted: 2 });
    expect(await q.sweep({ limit: 2 })).toEqual({ ...zero, stalled: 1, promoted: 1 });
    expect(await q.sweep({ limit: 2 })).toEqual(zero);
    expect(await q.counts()).toMatchObject({ pending: 10, working: 0, delayed: 0 });

    const leases = await q.lease({ count: 10 });
    for (const l of leases) await q.ack(l); // default retention: kept
    const r = res.queue<number>('r', { defaults: { keepCompletedMs: 50 } });
    await r.addBulk([0, 1, 2].map((data) => ({ data })));
    await r.ackBatch(await r.lease({ count: 3 }));
    await untilRedisTime(obs, (await redisNow(obs)) + 50, 'the retention to run out');
    expect((await r.sweep({ limit: 2 })).completedRemoved).toBe(2);
    expect((await r.sweep({ limit: 2 })).completedRemoved).toBe(1);
    expect((await r.counts()).completed).toBe(0);
  });

  test('5 concurrent sweeps from 5 connections: counts add up, nothing duplicated', async () => {
    const q = res.queue<number>();
    const n = 60;
    await q.addBulk(Array.from({ length: n }, (_, data) => ({ data, opts: { attempts: 5 } })));
    const first = await q.lease({ count: n, leaseMs: 50 });
    expect(first).toHaveLength(n);
    await pastDeadlines(res.client(), first);
    const sweepers = [q, ...Array.from({ length: 4 }, () => res.twin<number>(q))];
    await Promise.all(sweepers.map((s) => s.client.ping()));
    // capacity 5 x 10 = 50 < 60: the sum must be exactly 50 and the rest still expired
    const round1 = await Promise.all(sweepers.map((s) => s.sweep({ limit: 10 })));
    expect(round1.reduce((a, r) => a + r.stalled, 0)).toBe(50);
    const round2 = await Promise.all(sweepers.map((s) => s.sweep({ limit: 10 })));
    expect(round2.reduce((a, r) => a + r.stalled, 0)).toBe(10);
    expect(await q.counts()).toMatchObject({ pending: n, working: 0, dead: 0 });
    const obs = res.client();
    expect(await obs.llen(q.keys.byName.pending)).toBe(n);
    const again = await q.lease({ count: 1000 });
    const ids = again.map((l) => l.job.id);
    expect(new Set(ids).size).toBe(n);
    expect(ids.sort()).toEqual(first.map((l) => l.job.id).sort());
    expect(again.every((l) => l.job.attempt === 2)).toBe(true);
  });

  test('one job the scripts cannot decode does not orphan the other expired jobs of the same sweep', async () => {
    // "\ud800" (a lone surrogate escape) is valid JSON for JSON.parse but not for Redis'
    // cjson. add() refuses such names, so the record is written with the raw add script.
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    await rawAdd(q, 'poison', '{"t":1,"a":3,"n":"x \\ud800"}\n"poison"');
    await q.add('good-1');
    await q.add('good-2');
    const leased = await q.lease({ count: 3, leaseMs: 30 });
    expect(leased).toHaveLength(3);
    await pastDeadlines(obs, leased);
    await q.sweep().catch(() => undefined);
    await q.sweep().catch(() => undefined);
    const again = await q.lease({ count: 10 });
    expect(again.map((l) => l.job.data)).toEqual(expect.arrayContaining(['good-1', 'good-2']));
    // the poison job itself is not lost either: it is in some state index
    const state = (await q.getJob('poison'))!.state;
    expect(['pending', 'working', 'dead']).toContain(state);
    const indexed =
      (await obs.lpos(q.keys.byName.pending, 'poison')) !== null ||
      (await obs.zscore(q.keys.byName.dead, 'poison')) !== null ||
      (await obs.zscore(q.keys.byName.working, 'poison')) !== null;
    expect(indexed).toBe(true);
  });

  test('nack, requeue and reject of an undecodable job do not lose it', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    for (const id of ['p-nack', 'p-requeue', 'p-reject']) await rawAdd(q, id, '{"t":1,"a":3,"n":"\\ud800"}\n"x"');
    const [a, b, c] = await q.lease({ count: 3 });
    await q.nack(a!, { error: 'e', delayMs: 0 }).catch(() => undefined);
    await q.requeue(b!).catch(() => undefined);
    await q.reject(c!, 'r').catch(() => undefined);
    for (const id of ['p-nack', 'p-requeue', 'p-reject']) {
      const indexed =
        (await obs.lpos(q.keys.byName.pending, id)) !== null ||
        (await obs.zscore(q.keys.byName.dead, id)) !== null ||
        (await obs.zscore(q.keys.byName.delayed, id)) !== null ||
        (await obs.zscore(q.keys.byName.working, id)) !== null;
      expect([id, indexed]).toEqual([id, true]);
    }
  });

  test('a record without its attempts limit is not a job: its first failure dead-letters it untouched', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    const record = '{"t":1,"n":"x"}\n"x"';
    await rawAdd(q, 'no-limit', record);
    const [lease] = await q.lease();
    await q.nack(lease!, { error: 'e', delayMs: 0 });
    expect(await obs.zscore(q.keys.byName.dead, 'no-limit')).not.toBeNull();
    expect(await obs.hget(q.keys.byName.jobs, 'no-limit')).toBe(record);
  });

  test('rejects bad options', async () => {
    const q = res.queue();
    await expect(q.sweep({ limit: 0 })).rejects.toThrow(/limit/);
    await expect(q.sweep({ limit: 1.5 })).rejects.toThrow(/limit/);
    await expect(q.sweep({ max: 1 } as never)).rejects.toThrow(/unknown option/);
  });
});
