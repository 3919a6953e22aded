import { ValidationError } from '../../lib/index.js';
import type { ScriptArg } from '../../lib/core/redis/script-def.js';
import { ackItem, pushSettleBatch, requeueItem, settleBatch } from '../../lib/core/settles/settle-items.js';
import { useRedis, redisNow, untilRedisTime } from '../support/engine-harness.js';
import { internalsOf } from '../../lib/core/queue/internals.js';

const res = useRedis();

const fixed = (delayMs: number) => ({ type: 'fixed' as const, delayMs, jitter: 0 });

describe('ack', () => {
  test('true exactly once; stores the result; the job is completed', async () => {
    const q = res.queue<string, { ok: number }>();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    expect(await q.ack(l!, { ok: 1 })).toBe(true);
    expect(await q.ack(l!, { ok: 2 })).toBe(false);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'completed', result: { ok: 1 }, failures: 0 });
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: 1 });
  });

  test('without a result: completed, result undefined', async () => {
    const q = res.queue();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    expect(await q.ack(l!)).toBe(true);
    const info = await q.getJob(id);
    expect(info!.state).toBe('completed');
    expect(info!.result).toBeUndefined();
  });

  test('falsy results (0, false, "", null) are kept', async () => {
    const q = res.queue<number, unknown>();
    const results = [0, false, '', null];
    await q.addBulk(results.map((_, i) => ({ data: i })));
    const leases = await q.lease({ count: 4 });
    for (const [i, l] of leases.entries()) expect(await q.ack(l, results[i])).toBe(true);
    for (const [i, l] of leases.entries()) {
      const info = await q.getJob(l.job.id);
      if (results[i] === null) expect(info!.result ?? null).toBeNull();
      else expect(info!.result).toBe(results[i]);
    }
  });

  test('6 concurrent acks of one lease from 6 connections: exactly one true', async () => {
    const q = res.queue();
    await q.add('x');
    const [l] = await q.lease();
    const others = Array.from({ length: 5 }, () => res.twin(q));
    const all = await Promise.all([q, ...others].map((x) => x.ack(l!, 'r')));
    expect(all.filter(Boolean)).toHaveLength(1);
  });

  test('ack after nack, requeue or reject of the same lease is false', async () => {
    const q = res.queue();
    await q.addBulk([1, 2, 3].map((data) => ({ data, opts: { attempts: 5 } })));
    const [a, b, c] = await q.lease({ count: 3 });
    expect(await q.nack(a!, { error: 'e', delayMs: 0 })).toBe(true);
    expect(await q.requeue(b!)).toBe(true);
    expect(await q.reject(c!, 'r')).toBe(true);
    expect(await q.ack(a!)).toBe(false);
    expect(await q.ack(b!)).toBe(false);
    expect(await q.ack(c!)).toBe(false);
    expect((await q.counts()).completed).toBe(0);
  });
});

describe('ackBatch', () => {
  test('mixed valid and stale leases, with and without results, in order', async () => {
    const q = res.queue<number, string>();
    await q.addBulk([0, 1, 2, 3].map((data) => ({ data })));
    const [l0, l1, l2, l3] = await q.lease({ count: 4 });
    expect(await q.ack(l1!, 'early')).toBe(true); // l1 now stale
    const out = await q.ackBatch([l0!, l1!, { lease: l2!, result: 'two' }, { lease: l3! }]);
    expect(out).toEqual([true, false, true, true]);
    expect((await q.getJob(l1!.job.id))!.result).toBe('early');
    expect((await q.getJob(l2!.job.id))!.result).toBe('two');
    expect((await q.getJob(l0!.job.id))!.state).toBe('completed');
    expect(await q.counts()).toMatchObject({ working: 0, completed: 4 });
    expect(await q.ackBatch([])).toEqual([]);
  });

  test('the same lease twice in one batch is acked once', async () => {
    const q = res.queue();
    const obs = res.client();
    await q.add('x');
    const [l] = await q.lease();
    expect(await q.ackBatch([l!, l!])).toEqual([true, false]);
    expect(await obs.zcard(q.keys.byName.done)).toBe(1);
  });

  test('one settle call holding ack and requeue of the same lease applies only the first', async () => {
    // Queue.settle is what ackBatch, the worker's flush and shutdown use.
    const q = res.queue();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    expect(await internalsOf(q)!.settle([ackItem(l!, '"done"'), requeueItem(l!, 0, 'shutdown')])).toEqual([true, false]);
    const c = await q.counts();
    expect(c).toMatchObject({ completed: 1, pending: 0 });
    expect(await q.lease()).toEqual([]); // must not be delivered again after completing
    expect((await q.getJob(id))!.state).toBe('completed');
  });
});

describe('nack', () => {
  test('retry with backoff: delayed, then pending once due; attempt 2 sees the last error', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 3, backoff: fixed(1000) });
    const [l] = await q.lease();
    const t0 = await redisNow(obs);
    expect(await q.nack(l!, { error: new Error('boom') })).toBe(true);
    const t1 = await redisNow(obs);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'delayed', failures: 1, lastError: 'Error: boom' });
    expect(info!.runAt).toBeGreaterThanOrEqual(t0 + 1000);
    expect(info!.runAt).toBeLessThanOrEqual(t1 + 1000);
    expect(await q.lease()).toEqual([]);
    await untilRedisTime(obs, info!.runAt!, 'the retry to be due');
    expect((await q.sweep()).promoted).toBe(1);
    expect((await q.getJob(id))!.state).toBe('pending');
    const [again] = await q.lease();
    expect(again!.job).toMatchObject({ id, attempt: 2, lastError: 'Error: boom' });
    expect(again!.token).not.toBe(l!.token);
  });

  test('nack delayMs overrides the backoff; 0 retries at once', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { backoff: fixed(60_000) });
    const [l] = await q.lease();
    expect(await q.nack(l!, { error: 'e', delayMs: 0 })).toBe(true);
    expect((await q.getJob(id))!.state).toBe('pending');
    expect((await q.lease())[0]!.job.attempt).toBe(2);
  });

  test('exponential backoff doubles per failure (jitter 0)', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 4, backoff: { type: 'exponential', delayMs: 100, jitter: 0 } });
    // each due time lies within [Redis time before the nack, after it] + the expected delay
    for (const [i, delay] of [100, 200, 400].entries()) {
      await q.sweep();
      const [l] = await q.lease();
      expect(l!.job.attempt).toBe(i + 1);
      const t0 = await redisNow(obs);
      await q.nack(l!, { error: `e${i}` });
      const t1 = await redisNow(obs);
      const runAt = (await q.getJob(id))!.runAt!;
      expect([i, runAt >= t0 + delay, runAt <= t1 + delay]).toEqual([i, true, true]);
      await untilRedisTime(obs, runAt, `retry ${i + 1} to be due`);
    }
  });

  test('exponential backoff without maxDelayMs is capped at the documented default of 1 hour', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 30, backoff: { type: 'exponential', delayMs: 1000, jitter: 0 } });
    for (let i = 1; i <= 12; i++) await q.nack((await q.lease())[0]!, { error: 'e', delayMs: 0 });
    const [l] = await q.lease();
    expect(l!.job.attempt).toBe(13); // uncapped: 1000 ms * 2^12 = 68 min
    await q.nack(l!, { error: 'e' });
    const delay = (await q.getJob(id))!.runAt! - (await redisNow(obs));
    expect(delay).toBeLessThanOrEqual(3_600_000);
    expect(delay).toBeGreaterThan(3_500_000);
  });

  test('a backoff without jitter gets the documented default jitter of 0.2', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    const n = 12;
    await q.addBulk(Array.from({ length: n }, (_, data) => ({ data, opts: { backoff: { type: 'fixed' as const, delayMs: 10_000 } } })));
    const leases = await q.lease({ count: n });
    const delays: number[] = [];
    for (const l of leases) {
      // the delay lies within 10 s ± 20 % of the nack, which ran between t0 and t1
      const t0 = await redisNow(obs);
      await q.nack(l, { error: 'e' });
      const t1 = await redisNow(obs);
      const runAt = (await q.getJob(l.job.id))!.runAt!;
      expect(runAt).toBeGreaterThanOrEqual(t0 + 8000);
      expect(runAt).toBeLessThanOrEqual(t1 + 12_000);
      delays.push(runAt - t1);
    }
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(200); // jittered, not all 10 s
  });

  test('dead after the attempts are spent', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 2, backoff: fixed(0) });
    const [l1] = await q.lease();
    expect(await q.nack(l1!, { error: 'first' })).toBe(true);
    expect((await q.getJob(id))!.state).toBe('pending');
    const [l2] = await q.lease();
    expect(l2!.job.attempt).toBe(2);
    expect(await q.nack(l2!, { error: 'second' })).toBe(true);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'dead', failures: 2, lastError: 'second' });
    expect(await q.lease()).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, working: 0, dead: 1 });
  });

  test('attempts: 1 dies on the first nack', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 1 });
    const [l] = await q.lease();
    await q.nack(l!, { error: { code: 42 } });
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', failures: 1, lastError: '{"code":42}' });
  });

  test('a second nack of the same lease is false and counts nothing', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 5, backoff: fixed(0) });
    const [l] = await q.lease();
    expect(await q.nack(l!, { error: 'a' })).toBe(true);
    expect(await q.nack(l!, { error: 'b' })).toBe(false);
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 1, lastError: 'a' });
    expect((await q.counts()).pending).toBe(1);
  });
});

describe('error texts', () => {
  test('newlines, quotes, backslashes, slashes and unicode in an error survive the round trip', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 5 });
    const msg = 'line1\nline2 "quoted" back\\slash /path ünï ✓ 😀';
    await q.nack((await q.lease())[0]!, { error: new Error(msg), delayMs: 0 });
    expect((await q.getJob(id))!.lastError).toBe(`Error: ${msg}`);
    expect((await q.lease())[0]!.job.lastError).toBe(`Error: ${msg}`);
  });

  test('a very long error is truncated, not refused', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 5 });
    expect(await q.nack((await q.lease())[0]!, { error: 'e'.repeat(100_000), delayMs: 0 })).toBe(true);
    const err = (await q.getJob(id))!.lastError!;
    expect(err.length).toBeLessThan(10_000);
    expect(err.startsWith('eeee')).toBe(true);
  });
});

describe('requeue', () => {
  test('back to pending without counting a failure; requeues counter goes up', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 1 });
    for (let i = 1; i <= 3; i++) {
      const [l] = await q.lease();
      expect(l!.job.attempt).toBe(1);
      expect(l!.job.requeues).toBe(i - 1);
      expect(await q.requeue(l!)).toBe(true);
      expect(await q.requeue(l!)).toBe(false);
      expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 0, requeues: i });
    }
    const [l] = await q.lease();
    expect(await q.ack(l!)).toBe(true);
  });

  test('with delayMs: delayed until due', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    expect(await q.requeue(l!, { delayMs: 1000, reason: 'rate limited' })).toBe(true);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'delayed', failures: 0, requeues: 1 });
    expect(await q.lease()).toEqual([]);
    await untilRedisTime(obs, info!.runAt!, 'the requeued job to be due');
    expect((await q.lease())[0]!.job).toMatchObject({ id, attempt: 1, requeues: 1 });
  });
});

describe('reject', () => {
  test('dead at once with attempts left, reason kept', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 10 });
    const [l] = await q.lease();
    expect(await q.reject(l!, 'invalid payload')).toBe(true);
    expect(await q.reject(l!, 'again')).toBe(false);
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', lastError: 'invalid payload' });
    expect((await q.listDead()).map((d) => d.id)).toEqual([id]);
    expect(await q.lease()).toEqual([]);
  });

  test('reject with an Error keeps its name and message', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    await q.reject(l!, new TypeError('bad type'));
    expect((await q.getJob(id))!.lastError).toBe('TypeError: bad type');
  });
});

describe('touch', () => {
  test('extends the deadline; the job survives a sweep past its first deadline', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('x');
    const [l] = await q.lease({ leaseMs: 200 });
    const first = l!.deadline;
    const t0 = await redisNow(obs);
    expect(await q.touch(l!, 1000)).toBe(true);
    const t1 = await redisNow(obs);
    expect(l!.deadline).toBeGreaterThanOrEqual(t0 + 1000);
    expect(l!.deadline).toBeLessThanOrEqual(t1 + 1000);
    expect(l!.deadline).toBeGreaterThan(first);
    expect((await q.getJob(id))!.leaseDeadline).toBe(l!.deadline);
    await untilRedisTime(obs, first, 'the first deadline to pass');
    expect((await q.sweep()).stalled).toBe(0);
    expect((await q.getJob(id))!.state).toBe('working');
    expect(await q.ack(l!)).toBe(true);
  });

  test("without extendMs it extends by the job's own leaseMs", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('x', { leaseMs: 700 });
    const [l] = await q.lease({ leaseMs: 5000 });
    const t0 = await redisNow(obs);
    expect(await q.touch(l!)).toBe(true);
    const t1 = await redisNow(obs);
    expect(l!.deadline).toBeGreaterThanOrEqual(t0 + 700);
    expect(l!.deadline).toBeLessThanOrEqual(t1 + 700);
  });

  test('without extendMs it extends by the lease length the lease was taken with', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('x');
    const [l] = await q.lease({ leaseMs: 400 });
    const t0 = await redisNow(obs);
    expect(await q.touch(l!)).toBe(true);
    const t1 = await redisNow(obs);
    // documented: "Extends the lease by extendMs from now (default: its own lease length)"
    expect(l!.deadline).toBeGreaterThanOrEqual(t0 + 400);
    expect(l!.deadline).toBeLessThanOrEqual(t1 + 400);
  });

  test('false after the lease is lost (acked, or expired, swept and re-leased)', async () => {
    const q = res.queue<string>();
    await q.add('a');
    await q.add('b');
    const [a] = await q.lease();
    await q.ack(a!);
    expect(await q.touch(a!, 1000)).toBe(false);

    const [b] = await q.lease({ leaseMs: 100 });
    await untilRedisTime(res.client(), b!.deadline, 'the lease of b to run out');
    expect((await q.sweep()).stalled).toBe(1);
    expect(await q.touch(b!, 1000)).toBe(false); // swept: pending, nobody holds it
    const [b2] = await q.lease({ leaseMs: 5000 });
    expect(b2!.job.id).toBe(b!.job.id);
    const before = (await q.getJob(b!.job.id))!.leaseDeadline;
    expect(await q.touch(b!, 60_000)).toBe(false);
    expect((await q.getJob(b!.job.id))!.leaseDeadline).toBe(before);
  });

  test('rejects a bad extendMs with ValidationError', async () => {
    const q = res.queue<string>();
    await q.add('a');
    const [l] = await q.lease();
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(q.touch(l!, bad)).rejects.toBeInstanceOf(ValidationError);
    }
  });
});

describe('settle items on the wire', () => {
  test('acks without a result go compact, the rest in full; answers come back in the caller\'s order', async () => {
    const q = res.queue<number, string>();
    await q.addBulk([0, 1, 2, 3, 4].map((data) => ({ data, opts: data === 3 ? { keepCompletedMs: 0 } : undefined })));
    const leases = await q.lease({ count: 5 });
    const byData = (d: number) => leases.find((l) => l.job.data === d)!;
    const stale = { ...byData(1), token: `${byData(1).token}x` };
    const items = [
      ackItem(byData(0), ''), // compact
      ackItem(stale, ''), // compact, wrong token
      ackItem(byData(2), '"r2"'), // a result: full
      ackItem(byData(3), ''), // another retention: still compact (the script reads it from the lease)
      ackItem(byData(4), ''), // compact
    ];
    const args: ScriptArg[] = [];
    pushSettleBatch(args, settleBatch(items));
    // 1 full item of 5 fields, then 4 compact acks of 2
    expect(args.length).toBe(1 + 5 + 1 + 4 * 2);
    expect(await internalsOf(q)!.settle(items)).toEqual([true, false, true, true, true]);
    expect((await q.getJob(byData(2).job.id))!.result).toBe('r2');
    expect(await q.getJob(byData(3).job.id)).toBeNull(); // keepCompletedMs 0: removed
    expect(await q.counts()).toMatchObject({ completed: 3, working: 1 });
  });

  test('a job named twice goes all in full, so the first item still wins', async () => {
    const q = res.queue();
    const { id } = await q.add('x');
    const [l] = await q.lease();
    const items = [ackItem(l!, ''), requeueItem(l!, 0, 'again')];
    const args: ScriptArg[] = [];
    pushSettleBatch(args, settleBatch(items));
    expect(args.length).toBe(1 + 2 * 5 + 1);
    expect(await internalsOf(q)!.settle(items)).toEqual([true, false]);
    expect((await q.getJob(id))!.state).toBe('completed');
  });
});
