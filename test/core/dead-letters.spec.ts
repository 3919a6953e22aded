import type { Queue } from '../../lib/index.js';
import { useRedis, redisNow, untilRedisTime } from '../support/engine-harness.js';

const res = useRedis();

/** Adds `names` and dead-letters each (one by one, so they die in order). */
async function killAll(q: Queue<string>, names: string[]): Promise<string[]> {
  const obs = res.client();
  const ids: string[] = [];
  for (const n of names) {
    const { id } = await q.add(n, { name: `job-${n}`, attempts: 1 });
    const [l] = await q.lease();
    await q.nack(l!, { error: `failed ${n}` });
    ids.push(id);
    await untilRedisTime(obs, await redisNow(obs), 'the next millisecond'); // distinct death times
  }
  return ids;
}

describe('dead letters', () => {
  test('listDead: oldest first, with name, data, failures, lastError and diedAt; offset and limit', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const t0 = await redisNow(obs);
    const ids = await killAll(q, ['a', 'b', 'c']);
    const list = await q.listDead();
    expect(list.map((d) => d.id)).toEqual(ids);
    expect(list[0]).toMatchObject({ id: ids[0], name: 'job-a', data: 'a', failures: 1, lastError: 'failed a' });
    expect(list[0]!.diedAt).toBeGreaterThanOrEqual(t0);
    expect(list[2]!.diedAt).toBeGreaterThanOrEqual(list[0]!.diedAt);
    expect((await q.listDead({ offset: 1, limit: 1 })).map((d) => d.id)).toEqual([ids[1]]);
    expect(await q.listDead({ offset: 5 })).toEqual([]);
  });

  test('retryDead by ids: back to pending with a fresh attempt budget', async () => {
    const q = res.queue<string>();
    const [a, b] = await killAll(q, ['a', 'b']);
    expect(await q.retryDead([a!, 'unknown'])).toEqual([a]);
    const info = await q.getJob(a!);
    expect(info!.state).toBe('pending');
    expect(info!.lastError).toBeUndefined();
    expect((await q.listDead()).map((d) => d.id)).toEqual([b]);
    const [l] = await q.lease();
    expect(l!.job).toMatchObject({ id: a, attempt: 1, maxAttempts: 1 });
    expect(await q.ack(l!, 'ok')).toBe(true);
    expect(await q.retryDead([a!])).toEqual([]); // completed: not a dead letter
  });

  test('a redriven job gets all its attempts again', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x', { attempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
    for (let i = 0; i < 2; i++) await q.nack((await q.lease())[0]!, { error: `e${i}` });
    expect((await q.getJob(id))!.state).toBe('dead');
    expect((await q.getJob(id))!.failuresBeforeRedrive).toBeUndefined();
    await q.retryDead([id]);
    // the reads tell the fresh budget apart from the failures before it
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 2, failuresBeforeRedrive: 2, maxAttempts: 2 });
    const [first] = await q.lease();
    expect(first!.job.attempt).toBe(1);
    expect((await q.getJobs('working'))[0]).toMatchObject({ id, failures: 2, failuresBeforeRedrive: 2 });
    await q.nack(first!, { error: 'again' });
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 3, failuresBeforeRedrive: 2 }); // not dead: a fresh budget of 2
    const [second] = await q.lease();
    expect(second!.job.attempt).toBe(2);
    await q.nack(second!, { error: 'final' });
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', lastError: 'final' });
  });

  test('retryDead({ limit }) redrives the oldest', async () => {
    const q = res.queue<string>();
    const ids = await killAll(q, ['a', 'b', 'c']);
    expect(await q.retryDead({ limit: 2 })).toEqual(ids.slice(0, 2));
    expect((await q.lease({ count: 5 })).map((l) => l.job.id)).toEqual(ids.slice(0, 2));
    expect(await q.counts()).toMatchObject({ dead: 1, working: 2 });
  });

  test('a redriven job keeps its priority', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('hi', { priority: 5, attempts: 1 });
    await q.reject((await q.lease())[0]!, 'x');
    await q.add('plain');
    await q.retryDead([id]);
    expect((await q.lease())[0]!.job.id).toBe(id);
  });

  test('purgeDead by ids and by limit deletes for good', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const ids = await killAll(q, ['a', 'b', 'c']);
    expect(await q.purgeDead([ids[1]!])).toEqual([ids[1]]);
    expect(await q.getJob(ids[1]!)).toBeNull();
    expect(await q.purgeDead({ limit: 10 })).toEqual([ids[0], ids[2]]);
    expect(await q.listDead()).toEqual([]);
    expect((await q.counts()).dead).toBe(0);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(0);
    expect(await q.purgeDead([ids[0]!])).toEqual([]);
  });

  test('a purged custom jobId can be added again', async () => {
    const q = res.queue<string>();
    await q.add('x', { jobId: 'k', attempts: 1 });
    await q.reject((await q.lease())[0]!, 'x');
    expect((await q.add('y', { jobId: 'k' })).created).toBe(false);
    await q.purgeDead(['k']);
    expect((await q.add('y', { jobId: 'k' })).created).toBe(true);
  });

  test('retryDead / purgeDead / listDead with nothing dead', async () => {
    const q = res.queue<string>();
    expect(await q.listDead()).toEqual([]);
    expect(await q.retryDead({ limit: 10 })).toEqual([]);
    expect(await q.purgeDead({ limit: 10 })).toEqual([]);
    expect(await q.retryDead([])).toEqual([]);
  });
});
