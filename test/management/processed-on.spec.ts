/**
 * processedOn (the start of a job's current or last lease, Redis time) and finishedOn (when it
 * completed or died) on getJob and getJobs, in every state and through every way a lease ends.
 */
import type { Lease, Queue } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis } from '../support/engine-harness.js';

const res = useRedis();

/** Leases the next job once Redis time has moved past the last lease's start (distinct starts). */
async function leaseLater(q: Queue<string>, after: number, leaseMs = 30_000): Promise<Lease<string>> {
  await untilRedisTime(res.client(), after);
  const [lease] = await q.lease({ leaseMs });
  return lease!;
}

test('a job that was never leased has neither; a working one has its lease start, in getJob and getJobs', async () => {
  const q = res.queue<string>();
  const { id } = await q.add('a');
  const fresh = await q.getJob(id);
  expect(fresh).not.toHaveProperty('processedOn');
  expect(fresh).not.toHaveProperty('finishedOn');
  const lease = await leaseLater(q, 0);
  expect((await q.getJob(id))!.processedOn).toBe(lease.job.leasedAt);
  expect((await q.getJobs('working'))[0]!.processedOn).toBe(lease.job.leasedAt);
  expect(await q.getJob(id)).not.toHaveProperty('finishedOn');
});

test('completed: the start of the lease that completed it (a rebuilt lease too), finishedOn = completedAt', async () => {
  const q = res.queue<string>();
  const { id } = await q.add('a', { attempts: 3, backoff: 0 });
  const first = await leaseLater(q, 0);
  await q.nack(first, { error: 'boom' });
  const second = await leaseLater(q, first.job.leasedAt);
  expect(second.job.leasedAt).toBeGreaterThan(first.job.leasedAt);
  await untilRedisTime(res.client(), second.job.leasedAt);
  expect(await q.ack({ job: { id }, token: second.token }, 'ok')).toBe(true);
  const done = (await q.getJob(id))!;
  expect(done).toMatchObject({ state: 'completed', processedOn: second.job.leasedAt, finishedOn: done.completedAt });
  expect(done.completedAt).toBeGreaterThan(second.job.leasedAt);
  expect((await q.getJobs('completed'))[0]).toMatchObject({ processedOn: second.job.leasedAt, finishedOn: done.completedAt });
});

test('a failed, requeued, rejected or expired attempt leaves its lease start; dead: finishedOn = diedAt', async () => {
  const q = res.queue<string>();
  const obs = res.client();
  const { id: failed } = await q.add('f', { attempts: 2, backoff: 0 });
  let lease = await leaseLater(q, 0);
  await q.nack(lease, { error: 'boom' });
  expect(await q.getJob(failed)).toMatchObject({ state: 'pending', processedOn: lease.job.leasedAt });
  expect(await q.getJob(failed)).not.toHaveProperty('finishedOn');

  lease = await leaseLater(q, lease.job.leasedAt);
  await q.requeue(lease, { delayMs: 60_000 });
  expect(await q.getJob(failed)).toMatchObject({ state: 'delayed', processedOn: lease.job.leasedAt });
  await q.promote(failed);

  lease = await leaseLater(q, lease.job.leasedAt);
  await q.nack(lease, { error: 'again' }); // its last attempt: dead
  const dead = (await q.getJob(failed))!;
  expect(dead).toMatchObject({ state: 'dead', processedOn: lease.job.leasedAt, finishedOn: dead.diedAt });
  expect((await q.getJobs('dead'))[0]).toMatchObject({ processedOn: lease.job.leasedAt, finishedOn: dead.diedAt });

  const { id: rejected } = await q.add('r');
  lease = await leaseLater(q, lease.job.leasedAt);
  await q.reject(lease, 'no');
  expect(await q.getJob(rejected)).toMatchObject({ state: 'dead', processedOn: lease.job.leasedAt });

  const { id: stalled } = await q.add('s');
  lease = await leaseLater(q, lease.job.leasedAt, 50);
  await untilRedisTime(obs, lease.deadline);
  expect((await q.sweep()).stalled).toBe(1);
  expect(await q.getJob(stalled)).toMatchObject({ state: 'pending', processedOn: lease.job.leasedAt });
});

test('retry(id) starts afresh: neither is kept; a lease given back by a rate limit is not an attempt', async () => {
  const q = res.queue<string>();
  const { id } = await q.add('a', { attempts: 1 });
  await q.nack(await leaseLater(q, 0), { error: 'boom' });
  expect(await q.retry(id)).toBe('dead');
  const retried = await q.getJob(id);
  expect(retried).not.toHaveProperty('processedOn');
  expect(retried).not.toHaveProperty('finishedOn');

  const lease = await leaseLater(q, await redisNow(res.client()));
  expect(await q.rateLimit(lease, 1)).toBe(true);
  expect(await q.getJob(id)).not.toHaveProperty('processedOn');
});
