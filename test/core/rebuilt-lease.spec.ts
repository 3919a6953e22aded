/**
 * Settling reads retention, idempotency window and backoff from the stored job: a lease
 * rebuilt from its job id and token (e.g. handed to another process) settles exactly like the
 * lease() returned, and nothing the caller's lease object says about the policy counts.
 */
import { ValidationError, type Lease, type LeaseRef } from '../../lib/index.js';
import { redisNow, useRedis } from '../support/engine-harness.js';

const res = useRedis();

const rebuilt = (l: Lease<unknown>): LeaseRef => ({ job: { id: l.job.id }, token: l.token });

test('an ack through a rebuilt lease keeps the job for its own keepCompletedMs and idempotency window', async () => {
  const q = res.queue<string, string>();
  await q.add('kept', { jobId: 'kept', keepCompletedMs: 60_000, dedupWindowMs: 120_000 });
  await q.add('dropped', { jobId: 'dropped', keepCompletedMs: 0, dedupWindowMs: 0 });
  const leases = await q.lease({ count: 2 });
  const byId = new Map(leases.map((l) => [l.job.id, l]));

  const before = await redisNow(res.client());
  expect(await q.ack(rebuilt(byId.get('kept')!), 'r')).toBe(true);
  expect(await q.ack(rebuilt(byId.get('dropped')!), 'r')).toBe(true);

  const kept = await q.getJob('kept');
  expect(kept).toMatchObject({ state: 'completed', result: 'r' });
  expect(kept!.retainedUntil! - before).toBeGreaterThanOrEqual(60_000);
  expect(kept!.retainedUntil! - before).toBeLessThan(61_000 + 5_000);
  expect(await q.getJob('dropped')).toBeNull();
  // within its own window the custom id is still taken; the other one is free again
  expect(await q.add('again', { jobId: 'kept' })).toMatchObject({ created: false });
  expect(await q.add('again', { jobId: 'dropped' })).toMatchObject({ created: true });
});

test("the caller's lease object cannot change the stored policy", async () => {
  const q = res.queue<string, string>();
  const { id } = await q.add('x', { keepCompletedMs: 0 });
  const [l] = await q.lease();
  // a lease object edited (or built by an older version) to claim a long retention
  const edited = { ...l!, job: { ...l!.job, policy: { ...l!.job.policy, keepCompletedMs: 3_600_000 } } };
  expect(await q.ack(edited, 'r')).toBe(true);
  expect(await q.getJob(id)).toBeNull();
});

test("a nack through a rebuilt lease waits for the job's own backoff", async () => {
  const q = res.queue<string>();
  const opts = { attempts: 5, backoff: { type: 'exponential' as const, delayMs: 40_000, jitter: 0 } };
  const { id } = await q.add('x', opts);
  let [l] = await q.lease();
  let before = await redisNow(res.client());
  expect(await q.nack(rebuilt(l!), { error: 'first' })).toBe(true);
  let info = await q.getJob(id);
  expect(info).toMatchObject({ state: 'delayed', failures: 1, lastError: 'first' });
  expect(info!.runAt! - before).toBeGreaterThanOrEqual(40_000);
  expect(info!.runAt! - before).toBeLessThan(45_000);

  // the second failure of a job waits twice as long (exponential, from the stored attempt count)
  const second = await q.add('y', opts);
  [l] = await q.lease();
  expect(await q.nack(l!, { error: 'first', delayMs: 0 })).toBe(true);
  [l] = await q.lease();
  expect(l!.job).toMatchObject({ id: second.id, attempt: 2 });
  before = await redisNow(res.client());
  expect(await q.nack(rebuilt(l!), { error: 'second' })).toBe(true);
  info = await q.getJob(second.id);
  expect(info).toMatchObject({ state: 'delayed', failures: 2 });
  expect(info!.runAt! - before).toBeGreaterThanOrEqual(80_000);
  expect(info!.runAt! - before).toBeLessThan(85_000);
});

test('a jittered backoff stays within its bounds, and an explicit delay wins', async () => {
  const q = res.queue<number>();
  const jobs = await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ data: i, opts: { attempts: 3, backoff: { type: 'fixed' as const, delayMs: 10_000, jitter: 0.5 } } })));
  const leases = await q.lease({ count: 20 });
  const before = await redisNow(res.client());
  for (const l of leases) expect(await q.nack(rebuilt(l))).toBe(true);
  const delays = await Promise.all(jobs.map(async (j) => (await q.getJob(j.id))!.runAt! - before));
  for (const d of delays) {
    expect(d).toBeGreaterThanOrEqual(5_000);
    expect(d).toBeLessThanOrEqual(15_000 + 5_000);
  }
  expect(new Set(delays).size).toBeGreaterThan(1); // jittered, not one fixed value

  const { id } = await q.add(99, { backoff: 60_000 });
  const [l] = await q.lease();
  expect(l!.job.id).toBe(id);
  expect(await q.nack(rebuilt(l!), { delayMs: 0 })).toBe(true);
  expect((await q.getJob(id))!.state).toBe('pending');
  expect(await q.counts()).toMatchObject({ delayed: 20, pending: 1 });
});

test('a rebuilt lease is fenced like the original: a stale token settles nothing', async () => {
  const q = res.queue<string>();
  const { id } = await q.add('x');
  const [l] = await q.lease();
  expect(await q.ack({ job: { id }, token: `${l!.token}x` })).toBe(false);
  expect(await q.nack({ job: { id }, token: 'nope' })).toBe(false);
  expect(await q.touch({ job: { id }, token: 'nope' }, 1000)).toBe(false);
  expect((await q.getJob(id))!.state).toBe('working');
  expect(await q.ack(rebuilt(l!))).toBe(true);
});

test('touch of a rebuilt lease needs extendMs; malformed leases get a ValidationError', async () => {
  const q = res.queue<string>();
  await q.add('x');
  const [l] = await q.lease({ leaseMs: 5_000 });
  await expect(q.touch(rebuilt(l!))).rejects.toThrow(ValidationError);
  expect(await q.touch(rebuilt(l!), 20_000)).toBe(true);
  await expect(q.ack({ job: {}, token: 't' } as unknown as LeaseRef)).rejects.toThrow(ValidationError);
  await expect(q.ack(null as unknown as LeaseRef)).rejects.toThrow(ValidationError);
});

test('jobs of several policies, on queues settled in turn, each keep their own retention and window', async () => {
  // One Redis function library serves every queue: what it keeps between calls (the keys
  // derived from the last queue's tag, the retention parts of tokens already seen) must
  // never leak from one queue or one job to the next.
  const a = res.queue<string, string>();
  const b = res.queue<string, string>();
  const policies = [
    { jobId: 'keep-60s', keepCompletedMs: 60_000 },
    { jobId: 'drop', keepCompletedMs: 0, dedupWindowMs: 0 },
    { jobId: 'window', keepCompletedMs: 0, dedupWindowMs: 120_000 },
    { jobId: 'default' },
    { jobId: 'grouped-keep', keepCompletedMs: 30_000, group: 'g1' },
    { jobId: 'grouped-drop', keepCompletedMs: 0, group: 'g2' },
  ];
  for (const q of [a, b]) for (const p of policies) await q.add(p.jobId, p);
  const before = await redisNow(res.client());
  for (let round = 0; round < policies.length; round++) {
    for (const q of [a, b]) {
      const [l] = await q.lease();
      expect(await q.ack(rebuilt(l!), `r-${l!.job.id}`)).toBe(true);
    }
  }
  for (const q of [a, b]) {
    const kept = await q.getJob('keep-60s');
    expect(kept).toMatchObject({ state: 'completed', result: 'r-keep-60s' });
    expect(kept!.retainedUntil! - before).toBeGreaterThanOrEqual(60_000);
    expect(kept!.retainedUntil! - before).toBeLessThan(61_000 + 5_000);
    const grouped = await q.getJob('grouped-keep');
    expect(grouped!.retainedUntil! - before).toBeGreaterThanOrEqual(30_000);
    expect(grouped!.retainedUntil! - before).toBeLessThan(31_000 + 5_000);
    expect((await q.getJob('default'))!.retainedUntil! - before).toBeGreaterThanOrEqual(3_600_000);
    expect(await q.getJob('drop')).toBeNull();
    expect(await q.getJob('window')).toBeNull();
    expect(await q.getJob('grouped-drop')).toBeNull();
    // a custom id stays taken for its own window, or the default one; not without a window
    expect(await q.add('again', { jobId: 'window' })).toMatchObject({ created: false });
    expect(await q.add('again', { jobId: 'grouped-drop' })).toMatchObject({ created: false });
    expect(await q.add('again', { jobId: 'drop' })).toMatchObject({ created: true });
    expect(await q.counts()).toMatchObject({ working: 0 });
  }
});
