import { useRedis, redisNow } from '../support/engine-harness.js';

const res = useRedis();

describe("a job's error history (getJob().errors)", () => {
  test('every failed attempt, oldest first, with its attempt and Redis time; lastError is the newest', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const t0 = await redisNow(obs);
    const { id } = await q.add('x', { attempts: 3 });
    for (const n of [1, 2, 3]) {
      const [lease] = await q.lease();
      expect(lease!.job.id).toBe(id);
      await q.nack(lease!, { error: new Error(`boom ${n}`), delayMs: 0 });
    }
    const job = await q.getJob(id);
    expect(job!.state).toBe('dead');
    expect(job!.errors!.map((e) => [e.attempt, e.error])).toEqual([
      [1, 'Error: boom 1'],
      [2, 'Error: boom 2'],
      [3, 'Error: boom 3'],
    ]);
    expect(job!.lastError).toBe('Error: boom 3');
    for (const e of job!.errors!) expect(e.at).toBeGreaterThanOrEqual(t0);
    expect(job!.errors![2]!.at).toBeGreaterThanOrEqual(job!.errors![0]!.at);
  });

  test('expired leases and rejections are in it; a redrive keeps it and counts attempts afresh', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 2 });
    await q.lease({ leaseMs: 10 });
    const obs = res.client();
    const until = (await redisNow(obs)) + 15;
    while ((await redisNow(obs)) < until) await new Promise((r) => setTimeout(r, 2));
    await q.sweep();
    const [lease] = await q.lease();
    await q.reject(lease!, 'bad input');
    expect((await q.getJob(id))!.errors!.map((e) => [e.attempt, e.error])).toEqual([
      [1, 'lease expired'],
      [2, 'bad input'],
    ]);
    expect(await q.retryDead([id])).toEqual([id]);
    const [again] = await q.lease();
    await q.nack(again!, { error: 'after redrive', delayMs: 0 });
    expect((await q.getJob(id))!.errors!.map((e) => [e.attempt, e.error])).toEqual([
      [1, 'lease expired'],
      [2, 'bad input'],
      [1, 'after redrive'],
    ]);
  });

  test('keeps the last 10 errors', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 12 });
    for (let n = 1; n <= 12; n++) {
      const [lease] = await q.lease();
      await q.nack(lease!, { error: `e${n}`, delayMs: 0 });
    }
    const errors = (await q.getJob(id))!.errors!;
    expect(errors.map((e) => e.error)).toEqual(['e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10', 'e11', 'e12']);
    expect(errors.map((e) => e.attempt)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  test('a job that never failed has none', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x');
    const [lease] = await q.lease();
    await q.ack(lease!);
    const job = await q.getJob(id);
    expect(job!.state).toBe('completed');
    expect(job!.errors).toBeUndefined();
  });
});
