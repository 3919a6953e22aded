/**
 * A job's timeoutMs bounds one attempt: the handler's signal aborts at the timeout and the
 * attempt fails with a TimeoutError, retried by the job's policy. leaseMs stays the lease
 * length (renewed by the heartbeat), not a bound on run time.
 */
import { BatchWorker, TimeoutError, ValidationError, Worker, type Job, type WorkerEvent } from '../../lib/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** Resolves when `signal` aborts, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

test('the signal aborts at timeoutMs, the attempt fails with a TimeoutError and is retried by the policy', async () => {
  const q = res.queue<string, string>();
  const events: Array<WorkerEvent<string, string>> = [];
  const reasons: unknown[] = [];
  const w = res.worker(
    new Worker<string, string>(q, async (job: Job<string>) => {
      if (job.attempt === 1) {
        reasons.push(await aborted(job.signal)); // a handler that honours its signal
        throw job.signal.reason;
      }
      return `attempt ${job.attempt}`;
    }),
  );
  w.events.subscribe((e) => events.push(e));
  const t0 = Date.now();
  const { id } = await q.add('slow once', { timeoutMs: 300, attempts: 2, backoff: 0 });
  expect(await q.waitForResult(id, { timeoutMs: 10_000 })).toBe('attempt 2');
  expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toBeInstanceOf(TimeoutError);
  const failed = events.find((e) => e.type === 'failed');
  expect(failed).toMatchObject({ type: 'failed', willRetry: true });
  expect((failed as { error: unknown }).error).toBeInstanceOf(TimeoutError);
  expect(await q.getJob(id)).toMatchObject({ state: 'completed', failures: 1, lastError: expect.stringMatching(/timed out after 300 ms/) });
});

test('a handler that ignores its signal no longer holds the slot: the next job runs, the late result is dropped', async () => {
  const q = res.queue<string, string>();
  const never = new Promise<string>(() => undefined);
  res.worker(new Worker<string, string>(q, async (job) => (job.data === 'stuck' ? never : 'ok'), { concurrency: 1 }));
  const stuck = await q.add('stuck', { timeoutMs: 200, attempts: 1 });
  const next = await q.add('next');
  expect(await q.waitForResult(next.id, { timeoutMs: 10_000 })).toBe('ok');
  await waitUntil(async () => (await q.getJob(stuck.id))?.state === 'dead', 'the stuck job dead after its one attempt');
  expect((await q.getJob(stuck.id))!.lastError).toMatch(/timed out after 200 ms/);
});

test('the queue default timeoutMs applies, a job of its own overrides it, and a job without one runs as long as it needs', async () => {
  const q = res.queue<number, number>('defaults', { defaults: { timeoutMs: 150, attempts: 1 } });
  const plain = res.queue<number, number>('plain');
  const handler = async (job: Job<number>) => {
    await new Promise((r) => setTimeout(r, job.data));
    return job.data;
  };
  res.worker(new Worker(q, handler, { concurrency: 3 }));
  res.worker(new Worker(plain, handler));
  const short = await q.add(600);
  const own = await q.add(600, { timeoutMs: 5000 });
  const none = await plain.add(600);
  await waitUntil(async () => (await q.getJob(short.id))?.state === 'dead', 'the job under the default timeout dead');
  expect(await q.waitForResult(own.id, { timeoutMs: 10_000 })).toBe(600);
  expect(await plain.waitForResult(none.id, { timeoutMs: 10_000 })).toBe(600);
});

test('BatchWorker: a job past its timeoutMs fails whatever the batch returns for it; the others keep their outcomes', async () => {
  const q = res.queue<string, string>();
  const seen: unknown[] = [];
  res.worker(
    new BatchWorker<string, string>(
      q,
      async (jobs) => {
        const slow = jobs.find((j) => j.data === 'slow');
        if (slow) seen.push(await aborted(slow.signal));
        return jobs.map((j) => ({ ok: true as const, result: j.data }));
      },
      { size: 2, waitMs: 500 },
    ),
  );
  const [fast, slow] = await q.addBulk([{ data: 'fast' }, { data: 'slow', opts: { timeoutMs: 200, attempts: 1 } }]);
  expect(await q.waitForResult(fast!.id, { timeoutMs: 10_000 })).toBe('fast');
  await waitUntil(async () => (await q.getJob(slow!.id))?.state === 'dead', 'the slow job dead');
  expect(seen[0]).toBeInstanceOf(TimeoutError);
});

test('BatchWorker: once every job of a batch timed out, the batch is over without waiting for its handler', async () => {
  const q = res.queue<string>();
  let batches = 0;
  res.worker(
    new BatchWorker<string>(
      q,
      async () => {
        batches += 1;
        return new Promise<void>(() => undefined); // never returns
      },
      { size: 2, waitMs: 500 },
    ),
  );
  const added = await q.addBulk([{ data: 'a' }, { data: 'b' }].map((j) => ({ ...j, opts: { timeoutMs: 200, attempts: 2, backoff: 0 } })));
  await waitUntil(async () => (await q.counts()).dead === 2, 'both jobs dead after two timed-out attempts', 10_000);
  expect(batches).toBeGreaterThanOrEqual(2);
  for (const { id } of added) expect((await q.getJob(id))!.failures).toBe(2);
});

test('timeoutMs is checked before anything is written; waitMs is the bounded wait', async () => {
  const q = res.queue<number>();
  for (const bad of [0, -1, 1.5, '100', 2 ** 31]) {
    await expect(q.add(1, { timeoutMs: bad as never })).rejects.toThrow(ValidationError);
    expect(() => res.queue('bad', { defaults: { timeoutMs: bad as never } })).toThrow(/defaults\.timeoutMs/);
  }
  expect((await q.counts()).pending).toBe(0);
});
