/**
 * retry(id): a completed or dead job back to pending with a fresh attempt budget, in one
 * script; every other job (or none) refused with JobNotRetryableError and nothing written.
 */
import type { Redis } from 'ioredis';
import { JobNotRetryableError, type Queue, type QueueEvent } from '../../lib/index.js';
import { eventsReady, queueKeysIn, redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';
import { keyContent } from '../support/key-read.js';

const res = useRedis();

const fixed0 = { type: 'fixed' as const, delayMs: 0, jitter: 0 };

/** Every key of the queue with its serialized value. */
async function snapshot(c: Redis, q: Queue<any, any>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of await queueKeysIn(c, q)) out[k] = await keyContent(c, k);
  return out;
}

/** Adds job `id` and fails it `attempts` times: dead. */
async function dead(q: Queue<string>, id: string, attempts = 2, opts: { priority?: number; group?: string } = {}): Promise<void> {
  await q.add(`data of ${id}`, { jobId: id, name: `name-${id}`, attempts, backoff: fixed0, ...opts });
  for (let i = 1; i <= attempts; i++) expect(await q.nack((await q.lease())[0]!, { error: `failure ${i}` })).toBe(true);
  expect((await q.getJob(id))?.state).toBe('dead');
}

/** Adds job `id`, fails it `failures` times, then completes it with `result`. */
async function completed(q: Queue<string, string>, id: string, failures = 0, result = 'first result'): Promise<void> {
  await q.add(`data of ${id}`, { jobId: id, name: `name-${id}`, attempts: 3, backoff: fixed0 });
  for (let i = 1; i <= failures; i++) await q.nack((await q.lease())[0]!, { error: `failure ${i}` });
  expect(await q.ack((await q.lease())[0]!, result)).toBe(true);
  expect((await q.getJob(id))?.state).toBe('completed');
}

describe('retry', () => {
  test('a dead job: pending with a fresh budget, its data, name and failure history kept', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await dead(q, 'd');
    expect(await q.retry('d')).toBe('dead');
    expect(await whereIs(obs, q, 'd')).toEqual(['jobs', 'pending']);
    const info = await q.getJob('d');
    expect(info).toMatchObject({ state: 'pending', data: 'data of d', name: 'name-d', failures: 2, failuresBeforeRedrive: 2, maxAttempts: 2, retries: 1, dequeues: 2 });
    expect(info!.lastError).toBeUndefined();
    expect(info!.errors!.map((e) => [e.error, e.attempt])).toEqual([['failure 1', 1], ['failure 2', 2]]);
    const [l] = await q.lease();
    expect(l!.job).toMatchObject({ id: 'd', attempt: 1, maxAttempts: 2, data: 'data of d', name: 'name-d' });
    // the whole budget again: one failure retries, the second kills it
    expect(await q.nack(l!, { error: 'failure 3' })).toBe(true);
    expect((await q.getJob('d'))?.state).toBe('pending');
    expect(await q.nack((await q.lease())[0]!, { error: 'failure 4' })).toBe(true);
    expect(await q.getJob('d')).toMatchObject({ state: 'dead', failures: 4, failuresBeforeRedrive: 2, retries: 1 });
    expect((await q.getJob('d'))!.errors!.map((e) => e.attempt)).toEqual([1, 2, 1, 2]);
    await booksAgree(obs, q);
  });

  test('a completed job: pending again, its result and idempotency window gone, its completion still a dequeue', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    await completed(q, 'c', 1);
    expect(await obs.zscore(q.keys.byName.dedup, 'c')).not.toBeNull();
    expect(await q.retry('c')).toBe('completed');
    expect(await whereIs(obs, q, 'c')).toEqual(['jobs', 'pending']);
    const info = await q.getJob('c');
    expect(info).toMatchObject({ state: 'pending', data: 'data of c', name: 'name-c', failures: 1, failuresBeforeRedrive: 1, retries: 1, dequeues: 2 });
    expect(info!.result).toBeUndefined();
    expect(info!.completedAt).toBeUndefined();
    // its record holds the id: adding it again creates nothing
    expect(await q.add('another', { jobId: 'c' })).toEqual({ id: 'c', created: false });
    const [l] = await q.lease();
    expect(l!.job).toMatchObject({ id: 'c', attempt: 1, maxAttempts: 3, data: 'data of c' });
    expect(await q.ack(l!, 'second result')).toBe(true);
    expect(await q.getJob('c')).toMatchObject({ state: 'completed', result: 'second result', dequeues: 3, retries: 1 });
    expect(await obs.zscore(q.keys.byName.dedup, 'c')).not.toBeNull(); // a window again from this completion
    expect(await q.retry('c')).toBe('completed');
    expect(await q.getJob('c')).toMatchObject({ state: 'pending', retries: 2, dequeues: 3 });
  });

  test('a completed job without failures: retried, its retries counted', async () => {
    const q = res.queue<string, string>();
    await completed(q, 'c');
    expect(await q.retry('c')).toBe('completed');
    const info = await q.getJob('c');
    expect(info).toMatchObject({ state: 'pending', failures: 0, retries: 1, dequeues: 1 });
    expect(info!.failuresBeforeRedrive).toBeUndefined();
  });

  test('priority and group are kept: a prioritized job goes first, a grouped one to its group', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await dead(q, 'p', 1, { priority: 5 });
    await dead(q, 'g', 1, { group: 'tenant-1' });
    await q.add('plain', { jobId: 'plain' });
    expect(await q.retry('g')).toBe('dead');
    expect(await q.retry('p')).toBe('dead');
    expect(await whereIs(obs, q, 'p')).toEqual(['jobs', 'prio']);
    expect(await whereIs(obs, q, 'g')).toEqual(['jobs', 'group:tenant-1']);
    await booksAgree(obs, q);
    expect((await q.lease({ count: 3 })).map((l) => l.job.id).sort()).toEqual(['g', 'p', 'plain']);
  });

  test('publishes retried (reason retry)', async () => {
    const q = res.queue<string>('ev');
    const watcher = res.twin<string>(q);
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      await dead(q, 'd', 1);
      await q.retry('d');
      await waitUntil(() => got.some((e) => e.id === 'd' && e.type === 'retried'), 'the retried event');
      expect(got.filter((e) => e.id === 'd' && e.type === 'retried')).toEqual([{ type: 'retried', queue: 'ev', id: 'd', reason: 'retry' }]);
    } finally {
      sub.unsubscribe();
    }
  });

  test('retryDead counts its redrives among the retries too', async () => {
    const q = res.queue<string>();
    await dead(q, 'd', 1);
    expect(await q.retryDead(['d'])).toEqual(['d']);
    expect(await q.getJob('d')).toMatchObject({ state: 'pending', failuresBeforeRedrive: 1, retries: 1 });
  });

  test('refused with nothing written: pending, delayed, working, waiting for children, unknown, past its retention', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('x', { jobId: 'pending' });
    await q.add('x', { jobId: 'delayed', delayMs: 60_000 });
    await q.add('x', { jobId: 'working', priority: 9 });
    expect((await q.lease())[0]!.job.id).toBe('working');
    await q.addFlow({ data: 'parent', opts: { jobId: 'parent' }, children: [{ data: 'child', opts: { jobId: 'child', delayMs: 60_000 } }] });
    await q.add('x', { jobId: 'short', priority: 9, keepCompletedMs: 50 });
    const [short] = await q.lease();
    expect(short!.job.id).toBe('short');
    await q.ack(short!);
    await untilRedisTime(obs, (await redisNow(obs)) + 60, 'the retention of short to end');
    const before = await snapshot(obs, q);
    const cases: Array<[string, string | undefined, string]> = [
      ['pending', 'pending', 'it is pending: only completed and dead jobs are retried'],
      ['delayed', 'delayed', 'it is delayed: only completed and dead jobs are retried'],
      ['working', 'working', 'it is working: only completed and dead jobs are retried'],
      ['parent', 'waiting-children', 'it is waiting-children: only completed and dead jobs are retried'],
      ['never-added', undefined, 'no such job (or its retention ended)'],
      ['short', undefined, 'no such job (or its retention ended)'],
    ];
    for (const [id, state, why] of cases) {
      const err = await q.retry(id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(JobNotRetryableError);
      expect(err).toMatchObject({ code: 'RELQ_JOB_NOT_RETRYABLE', queue: q.name, jobId: id, state, message: `job ${id} of queue '${q.name}' cannot be retried: ${why}` });
    }
    expect(await snapshot(obs, q)).toEqual(before);
  });

  test('a record that cannot be decoded is refused, nothing written', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await dead(q, 'd', 1);
    await obs.hset(q.keys.byName.jobs, 'd', 'not a record');
    const before = await snapshot(obs, q);
    await expect(q.retry('d')).rejects.toMatchObject({ state: 'dead', message: `job d of queue '${q.name}' cannot be retried: its stored record cannot be decoded` });
    expect(await snapshot(obs, q)).toEqual(before);
  });

  test('an id that is not one is a ValidationError before any script', async () => {
    const q = res.queue<string>();
    await expect(q.retry('' as string)).rejects.toMatchObject({ code: 'RELQ_INVALID_ARGUMENT' });
    await expect(q.retry(7 as unknown as string)).rejects.toMatchObject({ code: 'RELQ_INVALID_ARGUMENT' });
  });

  test('racing a remove from another connection: one order or the other, never half of each', async () => {
    const q = res.queue<string>();
    const other = res.twin<string>(q);
    const obs = res.client();
    for (let i = 0; i < 20; i++) {
      const id = `r${i}`;
      await dead(q, id, 1);
      const [retried, removed] = await Promise.allSettled([q.retry(id), other.remove(id)]);
      expect(removed).toEqual({ status: 'fulfilled', value: true });
      if (retried.status === 'fulfilled') expect(retried.value).toBe('dead');
      else expect(retried.reason).toMatchObject({ name: 'JobNotRetryableError', state: undefined });
      expect(await whereIs(obs, q, id)).toEqual([]);
      expect(await q.getJob(id)).toBeNull();
      await booksAgree(obs, q);
    }
    expect(await q.counts()).toMatchObject({ pending: 0, dead: 0 });
  });
});
