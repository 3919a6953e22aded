/**
 * remove(id, { force }): a job in any state leaves every index; a leased one is refused
 * unless forced, and a forced one's lease is stale afterwards.
 */
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { JobLeasedError, RelqError } from '../../lib/index.js';
import { eventsReady, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';

const res = useRedis();

describe('remove', () => {
  test('pending jobs (FIFO, prioritized, grouped) leave their list and every index', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    for (const [id, opts] of [['a', {}], ['b', { priority: 3 }], ['c', { group: 'g1' }], ['d', {}], ['e', { group: 'g1' }]] as const) {
      await q.add(id, { jobId: id, ...opts });
    }
    for (const id of ['d', 'b', 'c']) {
      expect(await q.remove(id)).toBe(true);
      expect(await whereIs(obs, q, id)).toEqual([]);
      expect(await q.getJob(id)).toBeNull();
    }
    await booksAgree(obs, q);
    expect(await q.counts()).toMatchObject({ pending: 2 });
    expect((await q.lease({ count: 5 })).map((l) => l.job.id).sort()).toEqual(['a', 'e']);
    expect(await q.remove('d')).toBe(false); // gone already
    expect(await q.remove('never-added')).toBe(false);
  });

  test('a group emptied by remove leaves the rotation cleanly: its next job leases', async () => {
    const q = res.queue<string>('rot', { groupConcurrency: 1 });
    const obs = res.client();
    await q.add('x', { jobId: 'x', group: 'solo' });
    expect(await q.remove('x')).toBe(true);
    await booksAgree(obs, q);
    expect(await obs.sismember(q.keys.derived.groups, 'solo')).toBe(0);
    expect(await q.lease()).toEqual([]);
    await q.add('y', { jobId: 'y', group: 'solo' });
    expect((await q.lease())[0]!.job.id).toBe('y');
  });

  test('a delayed job: nextDue follows the delayed set', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('soon', { jobId: 'soon', delayMs: 10_000 });
    await q.add('later', { jobId: 'later', delayMs: 20_000 });
    expect(await q.remove('soon')).toBe(true);
    expect(await whereIs(obs, q, 'soon')).toEqual([]);
    await booksAgree(obs, q);
    expect(await q.remove('later')).toBe(true);
    expect(await obs.hexists(q.keys.byName.meta, 'nextDue')).toBe(0);
  });

  test('a leased job is refused without force (nothing changes), removed with it; the old lease is stale', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('w', { jobId: 'w' });
    const [lease] = await q.lease();
    const err = await q.remove('w').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobLeasedError);
    expect(err).toBeInstanceOf(RelqError);
    expect(err).toMatchObject({ code: 'RELQ_JOB_LEASED', jobId: 'w', queue: q.name });
    expect(await whereIs(obs, q, 'w')).toEqual(['jobs', 'leases', 'working']);
    expect(await q.touch(lease!, 5000)).toBe(true); // still its lease

    expect(await q.remove('w', { force: true })).toBe(true);
    expect(await whereIs(obs, q, 'w')).toEqual([]);
    expect(await q.touch(lease!, 5000)).toBe(false);
    expect(await q.ack(lease!, 'late')).toBe(false);
    expect(await q.nack(lease!, { error: 'late' })).toBe(false);
    expect(await q.requeue(lease!)).toBe(false);
    expect(await q.reject(lease!)).toBe(false);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: 0, dead: 0 });
    // the id is free again, and a new lease of it is not the old one
    expect((await q.add('w2', { jobId: 'w' })).created).toBe(true);
    const [again] = await q.lease();
    expect(await q.ack(lease!, 'late')).toBe(false);
    expect(await q.ack(again!, 'ok')).toBe(true);
  });

  test('force-removing a grouped lease frees its group slot (groupConcurrency)', async () => {
    const q = res.queue<string>('gl', { groupConcurrency: 1 });
    const obs = res.client();
    await q.add('one', { jobId: 'one', group: 't' });
    await q.add('two', { jobId: 'two', group: 't' });
    const [first] = await q.lease();
    expect(await q.lease()).toEqual([]); // the group is at its limit
    expect(await q.remove('one', { force: true })).toBe(true);
    expect(await obs.hget(q.keys.derived.gwork, 't')).toBeNull();
    expect((await q.lease())[0]!.job.id).toBe('two');
    expect(await q.ack(first!)).toBe(false);
  });

  test('a completed job goes with its result and idempotency window: its jobId may be added again', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('c', { jobId: 'c' });
    await q.ack((await q.lease())[0]!, 'done');
    expect((await q.add('c', { jobId: 'c' })).created).toBe(false);
    expect(await whereIs(obs, q, 'c')).toEqual(['jobs', 'results', 'done', 'dedup']);
    expect(await q.remove('c')).toBe(true);
    expect(await whereIs(obs, q, 'c')).toEqual([]);
    expect((await q.add('c', { jobId: 'c' })).created).toBe(true);
  });

  test('a dead job', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('x', { jobId: 'x', attempts: 1 });
    await q.nack((await q.lease())[0]!, { error: 'boom' });
    expect(await q.remove('x')).toBe(true);
    expect(await whereIs(obs, q, 'x')).toEqual([]);
    expect(await q.listDead()).toEqual([]);
  });

  test("publishes 'removed', and watch() ends with 'gone'", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('e', { jobId: 'e' });
    const states = firstValueFrom(q.watch('e').pipe(toArray()));
    const removed = firstValueFrom(q.events().pipe(filter((e) => e.type === 'removed'), take(1)));
    await eventsReady(obs, q);
    await waitUntil(async () => (await obs.exists(q.keys.byName.listeners)) === 1, 'listener');
    await q.remove('e');
    expect(await removed).toMatchObject({ type: 'removed', id: 'e', queue: q.name });
    expect(await states).toEqual(['pending', 'gone']);
  });

  test('a bounded queue: a producer waiting for room gets the removed job\'s slot', async () => {
    const q = res.queue<string>('bq', { bound: 2 });
    await q.add('a', { jobId: 'a' });
    await q.add('b', { jobId: 'b', delayMs: 60_000 });
    let added = false;
    const waiting = q.add('c', { jobId: 'c', waitMs: 10_000 }).then((r) => ((added = true), r));
    await waitUntil(async () => (await q.queueState()).waitingProducers === 1, 'the add waits for room');
    expect(added).toBe(false);
    expect(await q.remove('b')).toBe(true);
    expect((await waiting).created).toBe(true);
    expect(await q.counts()).toMatchObject({ pending: 2, delayed: 0 });
  });
});
