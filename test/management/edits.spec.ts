/**
 * Edits of one job: updateData(id | lease, data) replaces its data (a leased job only through
 * its lease), changeDelay(id, ms) moves a delayed job's due time, changePriority(id, p,
 * { lifo }) puts a pending job at the head of its priority.
 */
import { firstValueFrom, filter, take } from 'rxjs';
import { JobLeasedError, PayloadTooLargeError, ValidationError, Worker } from '../../lib/index.js';
import { blockedClients, eventsReady, redisNow, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';

const res = useRedis();

interface Doc {
  step: number;
  note?: string;
}

describe('updateData', () => {
  test('a pending, delayed, dead or completed job gets the new data; everything else of it stays', async () => {
    const q = res.queue<Doc, string>();
    const obs = res.client();
    await q.add({ step: 1 }, { jobId: 'p', name: 'report', priority: 5, attempts: 4 });
    await q.add({ step: 1 }, { jobId: 'd', delayMs: 60_000 });
    await q.add({ step: 1 }, { jobId: 'x', attempts: 1 });
    await q.add({ step: 1 }, { jobId: 'c' });
    const before = (await q.getJob('p'))!;
    expect(await q.updateData('p', { step: 2, note: 'edited' })).toBe(true);
    expect(await q.updateData('d', { step: 2 })).toBe(true);
    expect(await whereIs(obs, q, 'p')).toEqual(['jobs', 'prio']); // where it was
    expect(await whereIs(obs, q, 'd')).toEqual(['jobs', 'delayed']);
    const after = (await q.getJob('p'))!;
    expect(after.data).toEqual({ step: 2, note: 'edited' });
    expect({ ...after, data: before.data }).toEqual(before);

    // the next lease runs with it
    const leases = await q.lease({ count: 3 });
    expect(leases.map((l) => [l.job.id, l.job.data])).toEqual([
      ['p', { step: 2, note: 'edited' }],
      ['x', { step: 1 }],
      ['c', { step: 1 }],
    ]);
    expect(await q.ack(leases[0]!, 'ok')).toBe(true);
    expect(await q.nack(leases[1]!, { error: 'boom' })).toBe(true); // dead: one attempt
    expect(await q.ack(leases[2]!)).toBe(true);

    // a dead letter fixed up, then redriven with its new data
    expect(await q.updateData('x', { step: 9 })).toBe(true);
    expect(await q.retryDead(['x'])).toEqual(['x']);
    const [again] = await q.lease();
    expect(again!.job).toMatchObject({ id: 'x', data: { step: 9 } });
    // a completed job keeps its result
    expect(await q.updateData('c', { step: 3 })).toBe(true);
    expect(await q.getJob('c')).toMatchObject({ state: 'completed', data: { step: 3 } });
    expect(await q.updateData('never-added', { step: 1 })).toBe(false);
    expect(await obs.hexists(q.keys.byName.jobs, 'never-added')).toBe(0);
  });

  test('a leased job is refused by id (JobLeasedError, nothing written); its lease writes it', async () => {
    const q = res.queue<Doc, string>();
    await q.add({ step: 1 }, { jobId: 'w' });
    const [lease] = await q.lease();
    const err = await q.updateData('w', { step: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobLeasedError);
    expect(err).toMatchObject({ code: 'RELQ_JOB_LEASED', jobId: 'w', queue: q.name });
    expect((err as Error).message).toMatch(/job\.updateData/);
    expect((await q.getJob('w'))!.data).toEqual({ step: 1 });

    expect(await q.updateData(lease!, { step: 2 })).toBe(true);
    expect(await q.getJob('w')).toMatchObject({ state: 'working', data: { step: 2 } });
    expect(await q.touch(lease!, 5000)).toBe(true); // still its lease
    // a lease rebuilt from its id and token writes too; a stale one writes nothing
    expect(await q.updateData({ job: { id: 'w' }, token: lease!.token }, { step: 3 })).toBe(true);
    expect(await q.updateData({ job: { id: 'w' }, token: `${lease!.token}x` }, { step: 4 })).toBe(false);
    expect(await q.ack(lease!, 'done')).toBe(true);
    expect(await q.updateData(lease!, { step: 5 })).toBe(false); // acked: stale
    expect((await q.getJob('w'))!.data).toEqual({ step: 3 });
  });

  test("a lease that ran out and was swept writes nothing, even while the job waits for its next lease", async () => {
    const q = res.queue<Doc, string>();
    await q.add({ step: 1 }, { jobId: 's', leaseMs: 50 });
    const [old] = await q.lease();
    await waitUntil(async () => (await q.sweep()).stalled === 1, 'the expired lease swept');
    expect(await q.getJob('s')).toMatchObject({ state: 'pending' });
    expect(await q.updateData(old!, { step: 2 })).toBe(false);
    const [fresh] = await q.lease();
    expect(await q.updateData(old!, { step: 2 })).toBe(false);
    expect(fresh!.job.data).toEqual({ step: 1 });
    expect((await q.getJob('s'))!.data).toEqual({ step: 1 });
  });

  test('data is checked as add() checks it, before anything is written', async () => {
    const q = res.queue<unknown, string>('small', { maxPayloadBytes: 64 });
    await q.add({ step: 1 }, { jobId: 'v' });
    await expect(q.updateData('v', { big: 'x'.repeat(100) })).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(q.updateData('v', { n: 10n })).rejects.toThrow(ValidationError);
    await expect(q.updateData('v', undefined)).rejects.toThrow(/data/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(q.updateData('v', cyclic)).rejects.toThrow(/cycle/);
    await expect(q.updateData('', { step: 2 })).rejects.toThrow(ValidationError);
    await expect(q.updateData({ job: {} } as never, { step: 2 })).rejects.toThrow(ValidationError);
    expect((await q.getJob('v'))!.data).toEqual({ step: 1 });
  });
});

describe('changeDelay', () => {
  test("a delayed job is due delayMs from now on Redis's clock; nextDue and the tie lists follow", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('a', { jobId: 'a', delayMs: 10_000 });
    await q.add('b', { jobId: 'b', delayMs: 20_000 });
    const t0 = await redisNow(obs);
    expect(await q.changeDelay('a', 60_000)).toBe(true);
    const t1 = await redisNow(obs);
    const due = Number(await obs.zscore(q.keys.byName.delayed, 'a'));
    expect(due).toBeGreaterThanOrEqual(t0 + 60_000);
    expect(due).toBeLessThanOrEqual(t1 + 60_000);
    expect((await q.getJob('a'))!.runAt).toBe(due);
    await booksAgree(obs, q); // nextDue is now b's
    expect(await q.getJobs('delayed')).toMatchObject([{ id: 'b' }, { id: 'a' }]);

    // two jobs due in the same ms keep the order they were delayed in
    const at = (await redisNow(obs)) + 30_000;
    await q.add('c', { jobId: 'c', runAt: at });
    await q.add('d', { jobId: 'd', runAt: at });
    expect(await q.changeDelay('c', 100_000)).toBe(true);
    await booksAgree(obs, q);
    expect(await q.changeDelay('d', 100_000)).toBe(true);
    await booksAgree(obs, q);
  });

  test('changeDelay(id, 0) makes it due at once, and wakes a worker blocked on the empty queue', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const w = res.worker(new Worker(q, async (job) => `ran ${job.data}`, { blockMs: 20_000 }));
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the worker blocked');
    await q.add('later', { jobId: 'l', delayMs: 3_600_000 }); // wakes it: it blocks again until that job is due
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the worker blocked again');
    expect(await q.changeDelay('l', 0)).toBe(true);
    expect(await q.waitForResult('l', { timeoutMs: 3000 })).toBe('ran later');
    expect(w.isRunning).toBe(true);
  });

  test('only a delayed job: a pending, leased, completed or unknown one answers false, nothing written', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('p', { jobId: 'p' });
    await q.add('w', { jobId: 'w' });
    await q.add('c', { jobId: 'c' });
    await q.changePriority('w', 10);
    await q.changePriority('c', 5);
    const [w, c] = await q.lease({ count: 2 });
    await q.ack(c!);
    expect(w!.job.id).toBe('w');
    for (const id of ['p', 'w', 'c', 'none']) expect(await q.changeDelay(id, 1000)).toBe(false);
    expect(await obs.zcard(q.keys.byName.delayed)).toBe(0);
    expect(await obs.hexists(q.keys.byName.meta, 'nextDue')).toBe(0);
    expect(await q.counts()).toMatchObject({ pending: 1, working: 1, completed: 1, delayed: 0 });
  });

  test("publishes 'delayed' with the new due time", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('a', { jobId: 'a', delayMs: 10_000 });
    const events = firstValueFrom(q.events().pipe(filter((e) => e.type === 'delayed'), take(1)));
    await eventsReady(obs, q);
    expect(await q.changeDelay('a', 50_000)).toBe(true);
    const ev = await events;
    expect(ev).toMatchObject({ type: 'delayed', id: 'a', queue: q.name });
    expect(ev.runAt).toBe(Number(await obs.zscore(q.keys.byName.delayed, 'a')));
  });

  test('bad arguments are refused before anything runs', async () => {
    const q = res.queue<string>();
    await q.add('a', { jobId: 'a', delayMs: 10_000 });
    for (const bad of [-1, 1.5, Number.NaN, '5' as never, 2 ** 42]) await expect(q.changeDelay('a', bad)).rejects.toThrow(ValidationError);
    await expect(q.changeDelay('', 5)).rejects.toThrow(ValidationError);
  });
});

describe('changePriority with lifo', () => {
  test('a pending job goes to the head of its priority, also when its priority is unchanged', async () => {
    const q = res.queue<string>();
    for (const id of ['a', 'b', 'c']) await q.add(id, { jobId: id });
    for (const id of ['x', 'y', 'z']) await q.add(id, { jobId: id, priority: 5 });
    expect(await q.changePriority('c', 0, { lifo: true })).toBe(true);
    expect(await q.changePriority('z', 5, { lifo: true })).toBe(true);
    expect(await q.changePriority('b', 5, { lifo: true })).toBe(true); // to another priority, at its head
    expect(await q.changePriority('y', 5, { lifo: false })).toBe(true); // unchanged, no lifo: keeps its place
    expect(await q.changePriority('a', 0)).toBe(true); // the old signature
    expect((await q.getJobs('pending')).map((j) => j.id)).toEqual(['b', 'z', 'x', 'y', 'c', 'a']);
    expect((await q.lease({ count: 6 })).map((l) => l.job.id)).toEqual(['b', 'z', 'x', 'y', 'c', 'a']);
  });

  test('a delayed job keeps the priority (not lifo: it is not stored) for when it is due', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('d', { jobId: 'd', delayMs: 60_000 });
    await q.add('x', { jobId: 'x', priority: 3 });
    expect(await q.changePriority('d', 3, { lifo: true })).toBe(true);
    expect(await whereIs(obs, q, 'd')).toEqual(['jobs', 'delayed']);
    expect(await q.promote('d')).toBe(true);
    expect((await q.lease({ count: 2 })).map((l) => l.job.id)).toEqual(['x', 'd']);
  });

  test('lifo is checked: a boolean, and no other option', async () => {
    const q = res.queue<string>();
    await q.add('a', { jobId: 'a' });
    await expect(q.changePriority('a', 1, { lifo: 'yes' as never })).rejects.toThrow(ValidationError);
    await expect(q.changePriority('a', 1, { head: true } as never)).rejects.toThrow(/unknown option 'head'/);
    expect((await q.getJob('a'))!.priority).toBe(0);
  });
});
