/**
 * createTestJob(): the job a handler sees, in memory. What the handler reports is recorded,
 * checked as a queue checks it, and a lost lease behaves as in a worker.
 */
import { PayloadTooLargeError, RateLimitError, UnrecoverableError, ValidationError } from 'relq';
import { createTestJob } from 'relq/testing';
import { DEFAULT_POLICY } from '../../lib/core/defaults.js';

test('defaults: a first attempt of an unnamed job under the built-in policy, its data a JSON copy', () => {
  const at = new Date('2026-01-02T03:04:05.000Z');
  const before = Date.now();
  const job = createTestJob({ at, n: 1 });
  expect(job.data).toEqual({ at: '2026-01-02T03:04:05.000Z', n: 1 }); // as stored in Redis
  expect(job).toMatchObject({ name: '', attempt: 1, maxAttempts: DEFAULT_POLICY.attempts, priority: 0, requeues: 0, policy: DEFAULT_POLICY });
  expect(job.id).toMatch(/^test-job-\d+$/);
  expect(createTestJob(1).id).not.toBe(job.id);
  expect(job.deadline).toBeGreaterThanOrEqual(before + 30_000);
  expect(job.signal.aborted).toBe(false);
});

test('overrides set the fields and merge the policy', async () => {
  const job = createTestJob('x', { id: 'j1', name: 'welcome', attempt: 3, group: 'tenant-1', policy: { attempts: 7, leaseMs: 1000 }, childrenResults: { c1: 'done' } });
  expect(job).toMatchObject({ id: 'j1', name: 'welcome', attempt: 3, group: 'tenant-1', maxAttempts: 7 });
  expect(job.policy).toEqual({ ...DEFAULT_POLICY, attempts: 7, leaseMs: 1000 });
  await expect(job.childrenResults<string>()).resolves.toEqual({ c1: 'done' });
  await expect(createTestJob('y').childrenResults()).resolves.toEqual({});
  // @ts-expect-error overrides are checked: no such field
  createTestJob('z', { atempt: 2 });
  // @ts-expect-error overrides are checked: attempt is a number
  createTestJob('z', { attempt: '2' });
});

test('records progress, log lines and touches; touch moves the deadline', async () => {
  const job = createTestJob({ n: 1 }, { policy: { leaseMs: 1000 } });
  const deadline = job.deadline;
  await expect(job.updateProgress(10)).resolves.toBe(true);
  await expect(job.updateProgress({ step: 'two', at: new Date(0) })).resolves.toBe(true);
  await expect(job.log('first')).resolves.toBe(true);
  await expect(job.touch(60_000)).resolves.toBe(true);
  await expect(job.touch()).resolves.toBe(true);
  expect(job.progressUpdates).toEqual([10, { step: 'two', at: '1970-01-01T00:00:00.000Z' }]);
  expect(job.logs).toEqual(['first']);
  expect(job.touches).toEqual([60_000, undefined]);
  expect(job.deadline).toBeGreaterThan(deadline - 1000); // set again from now + the lease's 1000 ms
});

test('bad progress and log lines are refused as a queue refuses them, and not recorded', async () => {
  const job = createTestJob(0);
  await expect(job.updateProgress(Number.NaN)).rejects.toThrow(ValidationError);
  await expect(job.updateProgress('half' as unknown as number)).rejects.toThrow(/progress: must be a number, an object or an array/);
  await expect(job.log(42 as unknown as string)).rejects.toThrow(/line: must be a string/);
  await expect(job.log('x'.repeat(2 * 1024 * 1024))).rejects.toThrow(PayloadTooLargeError);
  expect(() => createTestJob({ n: 1n })).toThrow(ValidationError);
  expect(job.progressUpdates).toEqual([]);
  expect(job.logs).toEqual([]);
});

test('reject() and rateLimit() throw what a worker acts on, and are recorded', () => {
  const job = createTestJob(0);
  expect(() => job.reject('bad input')).toThrow(UnrecoverableError);
  let limited: unknown;
  try {
    job.rateLimit(5000, { scope: 'queue' });
  } catch (err) {
    limited = err;
  }
  expect(limited).toBeInstanceOf(RateLimitError);
  expect(limited).toMatchObject({ delayMs: 5000, scope: 'queue' });
  expect(job.rejections).toEqual(['bad input']);
  expect(job.rateLimits).toEqual([{ delayMs: 5000, scope: 'queue' }]);
});

test('abort() aborts the signal with its reason; the lease still holds', async () => {
  const job = createTestJob(0);
  const seen: unknown[] = [];
  job.signal.addEventListener('abort', () => seen.push(job.signal.reason));
  const reason = new Error('timed out');
  job.abort(reason);
  expect(job.signal.aborted).toBe(true);
  expect(seen).toEqual([reason]);
  await expect(job.log('after the timeout')).resolves.toBe(true);
});

test('loseLease(): the signal aborts, and touch, progress and log answer false and record nothing', async () => {
  const job = createTestJob(0, { id: 'lost-1' });
  job.loseLease();
  expect(job.signal.aborted).toBe(true);
  expect(String(job.signal.reason)).toMatch(/lease of job lost-1 was lost/);
  await expect(job.touch()).resolves.toBe(false);
  await expect(job.updateProgress(50)).resolves.toBe(false);
  await expect(job.log('late')).resolves.toBe(false);
  expect([job.touches, job.progressUpdates, job.logs]).toEqual([[], [], []]);
});

test('a step: updateData and snooze / moveToDelayed are recorded; the first move ends the lease', async () => {
  const job = createTestJob({ step: 1, at: 'x' });
  await expect(job.updateData({ step: 2, at: new Date(0) } as never)).resolves.toBe(true);
  expect(job.dataUpdates).toEqual([{ step: 2, at: '1970-01-01T00:00:00.000Z' }]); // as stored
  expect(job.data).toMatchObject({ step: 2 });
  await expect(job.snooze(-1)).rejects.toThrow(ValidationError);
  await expect(job.updateData({ big: 'x'.repeat(2 * 1024 * 1024) } as never)).rejects.toThrow(PayloadTooLargeError);
  await expect(job.snooze(5000)).resolves.toBe(true);
  await expect(job.moveToDelayed(new Date(86_400_000))).resolves.toBe(false);
  await expect(job.updateData({ step: 3, at: 'y' })).resolves.toBe(false);
  await expect(job.touch()).resolves.toBe(false);
  expect(job.delays).toEqual([{ delayMs: 5000 }]);
  expect(job.dataUpdates).toHaveLength(1);
  expect(job.signal.aborted).toBe(false);

  const other = createTestJob(0);
  await expect(other.moveToDelayed(new Date(86_400_000))).resolves.toBe(true);
  expect(other.delays).toEqual([{ runAt: 86_400_000 }]);
});
