/**
 * Retention of finished jobs by count and by age (`keepCompleted`, `keepDead`), per queue and
 * per job: a count trims the oldest beyond it when a job that has it completes (dies), at most
 * 10 per such job; an age ends at the sweep (dead jobs) or at reads (completed ones, as
 * `keepCompletedMs`, which is `keepCompleted.ageMs` by its older name). A job removed by
 * retention leaves every index with its record, result, progress and log lines.
 */
import type { Redis } from 'ioredis';
import type { JobOptions, Queue, QueueOptions } from '../../lib/index.js';
import { Worker } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';
import { whereIs } from '../support/job-indexes.js';

const res = useRedis();

/** Waits for the next millisecond of Redis time, so that jobs finish in a known order. */
async function nextMs(obs: Redis): Promise<void> {
  await untilRedisTime(obs, await redisNow(obs), 'the next millisecond');
}

/** Adds a job, leases it and acks it (settle.lua); returns its id. */
async function complete(q: Queue<string, string>, obs: Redis, opts?: JobOptions): Promise<string> {
  const { id } = await q.add('x', opts);
  const [l] = await q.lease();
  expect(l!.job.id).toBe(id);
  expect(await q.ack(l!, `r-${id}`)).toBe(true);
  await nextMs(obs);
  return id;
}

/** Adds a job with one attempt, leases it and fails it into the dead set; returns its id. */
async function kill(q: Queue<string, string>, obs: Redis, opts?: JobOptions): Promise<string> {
  const { id } = await q.add('x', { attempts: 1, ...opts });
  const [l] = await q.lease();
  expect(l!.job.id).toBe(id);
  expect(await q.nack(l!, { error: 'boom' })).toBe(true);
  await nextMs(obs);
  return id;
}

async function completedIds(q: Queue<string, string>): Promise<string[]> {
  return (await q.getJobs('completed')).map((j) => j.id).sort();
}

/** Expects `id` gone: no read finds it, no index or record holds it, nor its progress and lines. */
async function expectGone(q: Queue<string, string>, obs: Redis, id: string): Promise<void> {
  expect(await q.getJob(id)).toBeNull();
  expect(await whereIs(obs, q, id)).toEqual([]);
  expect(await obs.hexists(q.keys.derived.progress, id)).toBe(0);
  expect(await obs.exists(q.keys.derived.log(id))).toBe(0);
}

function queue(opts: QueueOptions = {}): Queue<string, string> {
  return res.queue<string, string>('q', opts);
}

describe('keepCompleted.count', () => {
  test('per queue: the newest `count` completed jobs stay; the older leave with their results, progress and lines', async () => {
    const q = queue({ defaults: { keepCompleted: { count: 3 } } });
    const obs = res.client();
    // the first job writes progress and a log line before it completes
    const { id: first } = await q.add('x');
    const [l] = await q.lease();
    expect(await q.updateProgress(l!, 50)).toBe(true);
    expect(await q.log(l!, 'half way')).toBe(true);
    expect(await q.ack(l!, 'r')).toBe(true);
    await nextMs(obs);
    const ids = [first];
    for (let i = 0; i < 5; i++) ids.push(await complete(q, obs));

    expect(await completedIds(q)).toEqual(ids.slice(3).sort());
    expect(await q.counts()).toMatchObject({ completed: 3 });
    for (const id of ids.slice(0, 3)) await expectGone(q, obs, id);
    expect(await obs.hlen(q.keys.byName.results)).toBe(3);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(3);
  });

  test("a Worker's acks (in its lease calls) trim the same way", async () => {
    const q = queue({ defaults: { keepCompleted: { count: 2 } } });
    const obs = res.client();
    let done = 0;
    res.worker(
      new Worker(q, async (job) => {
        done += 1;
        return job.data;
      }),
    );
    for (let i = 0; i < 8; i++) {
      await q.add(`j${i}`);
      await waitUntil(() => done === i + 1, `job ${i}`);
    }
    await waitUntil(async () => (await obs.hlen(q.keys.byName.jobs)) === 2, 'two jobs left');
    expect(await obs.zcard(q.keys.byName.done)).toBe(2);
    expect((await q.getJobs('completed')).map((j) => j.data).sort()).toEqual(['j6', 'j7']);
  });

  test('per job: when a job with a count completes, the completed jobs are trimmed to its count; jobs without one trim nothing', async () => {
    const q = queue();
    const obs = res.client();
    const plain: string[] = [];
    for (let i = 0; i < 4; i++) plain.push(await complete(q, obs));
    const counted = await complete(q, obs, { keepCompleted: { count: 2 } });
    expect(await completedIds(q)).toEqual([plain[3]!, counted].sort());
    for (const id of plain.slice(0, 3)) await expectGone(q, obs, id);
    // a later job without a count keeps everything
    const later = await complete(q, obs);
    expect(await completedIds(q)).toEqual([plain[3]!, counted, later].sort());
  });

  test('a lowered count converges: each job with the count removes at most 10 of the oldest beyond it', async () => {
    const q = queue();
    const obs = res.client();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await complete(q, obs, { keepCompleted: { count: 100 } }));
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await complete(q, obs, { keepCompleted: { count: 2 } }));
      sizes.push(await obs.zcard(q.keys.byName.done));
    }
    expect(sizes).toEqual([16, 7, 2, 2]);
    expect(await completedIds(q)).toEqual(ids.slice(-2).sort());
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(2);
  });

  test('a job taken back by retry(id) leaves the completed jobs: it is neither counted nor trimmed until it completes again', async () => {
    const q = queue({ defaults: { keepCompleted: { count: 2 } } });
    const obs = res.client();
    const a = await complete(q, obs);
    const b = await complete(q, obs);
    expect(await q.retry(a)).toBe('completed');
    expect(await whereIs(obs, q, a)).toEqual(['jobs', 'pending']);
    // a third job completes first: two completed (b, c), nothing to trim, a still pending
    const { id: c } = await q.add('c', { priority: 1 });
    const [lc] = await q.lease();
    expect(lc!.job.id).toBe(c);
    await q.ack(lc!, 'c');
    await nextMs(obs);
    expect(await completedIds(q)).toEqual([b, c].sort());
    expect(await q.getJob(a)).toMatchObject({ state: 'pending' });
    // a completes again: the oldest (b) goes
    const [la] = await q.lease();
    expect(la!.job.id).toBe(a);
    await q.ack(la!, 'again');
    expect(await completedIds(q)).toEqual([a, c].sort());
    await expectGone(q, obs, b);
    expect(await q.getJob(a)).toMatchObject({ state: 'completed', result: 'again' });
  });
});

describe('keepCompleted.ageMs and keepCompletedMs', () => {
  test('are one rule: the same stored policy and retention; a count and an age given at two levels both apply', async () => {
    // 1.5 s: long enough that the reads after the acks still find the jobs on a loaded machine
    const q = queue({ defaults: { keepCompletedMs: 60_000 } });
    const { id: a } = await q.add('a', { keepCompleted: { ageMs: 1500 } });
    const { id: b } = await q.add('b', { keepCompletedMs: 1500 });
    const { id: c } = await q.add('c', { keepCompleted: { count: 5 } });
    const leases = await q.lease({ count: 3 });
    const policy = Object.fromEntries(leases.map((l) => [l.job.id, l.job.policy]));
    expect(policy[a]).toEqual(policy[b]);
    expect(policy[a]).toMatchObject({ keepCompletedMs: 1500 });
    expect(policy[a]!.keepCompletedCount).toBeUndefined();
    expect(policy[c]).toMatchObject({ keepCompletedMs: 60_000, keepCompletedCount: 5 });
    for (const l of leases) await q.ack(l, 'r');
    const infoA = (await q.getJob(a))!;
    const infoB = (await q.getJob(b))!;
    expect(infoA.retainedUntil! - infoA.completedAt!).toBe(1500);
    expect(infoB.retainedUntil! - infoB.completedAt!).toBe(1500);
    expect((await q.getJob(c))!.retainedUntil! - (await q.getJob(c))!.completedAt!).toBe(60_000);

    const obs = res.client();
    await untilRedisTime(obs, infoA.retainedUntil!, 'past the 1.5 s retention');
    expect(await q.getJob(a)).toBeNull();
    expect(await q.getJob(b)).toBeNull();
    expect(await q.sweep()).toMatchObject({ completedRemoved: 2 });
    expect(await completedIds(q)).toEqual([c]);
  });
});

describe('keepDead', () => {
  test('count per queue: the newest `count` dead jobs stay; the older are gone for listDead and getJob', async () => {
    const q = queue({ defaults: { keepDead: { count: 2 } } });
    const obs = res.client();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await kill(q, obs));
    expect((await q.listDead()).map((d) => d.id)).toEqual(ids.slice(2));
    expect(await q.counts()).toMatchObject({ dead: 2 });
    for (const id of ids.slice(0, 2)) await expectGone(q, obs, id);
  });

  test('count per job: when a job with a count dies, the dead jobs are trimmed to it', async () => {
    const q = queue();
    const obs = res.client();
    const plain = [await kill(q, obs), await kill(q, obs), await kill(q, obs)];
    const counted = await kill(q, obs, { keepDead: { count: 1 } });
    expect((await q.listDead()).map((d) => d.id)).toEqual([counted]);
    for (const id of plain) await expectGone(q, obs, id);
  });

  test('count applies to jobs the sweep dead-letters (expired leases)', async () => {
    const q = queue({ defaults: { keepDead: { count: 1 }, attempts: 1 } });
    const obs = res.client();
    await q.add('a');
    await q.add('b');
    const leases = await q.lease({ count: 2, leaseMs: 10 });
    expect(leases).toHaveLength(2);
    await untilRedisTime(obs, (await redisNow(obs)) + 20, 'the leases expired');
    expect(await q.sweep()).toMatchObject({ stalled: 2, deadLettered: 2 });
    expect(await q.listDead()).toHaveLength(1);
    expect(await obs.hlen(q.keys.byName.jobs)).toBe(1);
  });

  test('age: a dead job leaves at the first sweep after its ageMs; jobs without one stay', async () => {
    // 1.5 s: the first sweep comes before it ends even on a loaded machine
    const q = queue();
    const obs = res.client();
    const aged = await kill(q, obs, { keepDead: { ageMs: 1500 } });
    const kept = await kill(q, obs);
    const diedAt = (await q.getJob(aged))!.diedAt!;
    expect(await q.sweep()).toMatchObject({ deadRemoved: 0 });
    await untilRedisTime(obs, diedAt + 1500, 'past the 1.5 s retention');
    expect(await q.sweep()).toMatchObject({ deadRemoved: 1 });
    expect((await q.listDead()).map((d) => d.id)).toEqual([kept]);
    await expectGone(q, obs, aged);
  });

  test('ageMs 0 (per queue): a dead job is removed by the call that dead-letters it', async () => {
    const q = queue({ defaults: { keepDead: { ageMs: 0 } } });
    const obs = res.client();
    const nacked = await kill(q, obs);
    await q.add('r');
    const [l] = await q.lease();
    expect(await q.reject(l!, 'no')).toBe(true);
    expect(await q.listDead()).toEqual([]);
    await expectGone(q, obs, nacked);
    await expectGone(q, obs, l!.job.id);
  });

  test('a dead job taken back by retry(id), retryDead or removed leaves its retention: a later sweep does not remove it', async () => {
    const q = queue({ defaults: { keepDead: { ageMs: 300 } } });
    const obs = res.client();
    const a = await kill(q, obs);
    const b = await kill(q, obs);
    const c = await kill(q, obs);
    const diedAt = (await q.getJob(c))!.diedAt!;
    expect(await q.retry(a)).toBe('dead');
    expect(await q.retryDead([b])).toEqual([b]);
    expect(await q.remove(c)).toBe(true);
    for (const id of [a, b]) expect(await whereIs(obs, q, id)).toEqual(['jobs', 'pending']);
    expect(await whereIs(obs, q, c)).toEqual([]);
    await untilRedisTime(obs, diedAt + 300, 'past the 300 ms retention');
    expect(await q.sweep()).toMatchObject({ deadRemoved: 0 });
    expect(await q.getJob(a)).toMatchObject({ state: 'pending' });
    expect(await q.getJob(b)).toMatchObject({ state: 'pending' });
  });

  test("a flow's parent that dies with its child has its own keepDead", async () => {
    const q = queue();
    const obs = res.client();
    const flow = await q.addFlow({ data: 'parent', opts: { keepDead: { ageMs: 0 } }, children: [{ data: 'child', opts: { attempts: 1 } }] });
    const child = flow.children[0]!.id;
    const [l] = await q.lease();
    expect(l!.job.id).toBe(child);
    await q.nack(l!, { error: 'boom' });
    // the parent died with its child, and went at once; the child keeps the built-in retention
    expect((await q.listDead()).map((d) => d.id)).toEqual([child]);
    await expectGone(q, obs, flow.id);
  });
});
