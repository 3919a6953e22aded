/**
 * Why a handler's `job.signal` aborts, as typed errors a handler can tell apart: the lease
 * lost (the job removed by force under it) or given back at the worker's shutdown, like the
 * attempt timeout's TimeoutError (test/timeouts).
 */
import { LeaseLostError, RelqError, Worker, type Job } from '../../lib/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** A worker whose handler waits for its signal; `reasons` gets each abort reason. */
function waitingWorker(reasons: unknown[]) {
  const q = res.queue<string>();
  const started: string[] = [];
  const w = res.worker(
    new Worker<string>(
      q,
      (job: Job<string>) =>
        new Promise((_, reject) => {
          started.push(job.id);
          job.signal.addEventListener('abort', () => {
            reasons.push(job.signal.reason);
            reject(job.signal.reason as Error);
          });
        }),
      { leaseMs: 1500, blockMs: 200 },
    ),
  );
  return { q, w, started };
}

test('a lease lost under a running handler aborts its signal with LeaseLostError', async () => {
  const reasons: unknown[] = [];
  const { q, started } = waitingWorker(reasons);
  const { id } = await q.add('held');
  await waitUntil(() => started.length === 1, 'the handler runs');
  expect(await q.remove(id, { force: true })).toBe(true);
  await waitUntil(() => reasons.length === 1, 'the heartbeat finds the lease gone', 10_000);
  expect(reasons[0]).toBeInstanceOf(LeaseLostError);
  expect(reasons[0]).toBeInstanceOf(RelqError);
  expect(reasons[0]).toMatchObject({ jobId: id, code: 'RELQ_LEASE_LOST', message: `lease of job ${id} was lost` });
});

test("a job given back at the worker's shutdown aborts its signal with LeaseLostError", async () => {
  const reasons: unknown[] = [];
  const { q, w, started } = waitingWorker(reasons);
  const { id } = await q.add('held');
  await waitUntil(() => started.length === 1, 'the handler runs');
  await w.close({ drainTimeoutMs: 0 });
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toBeInstanceOf(LeaseLostError);
  expect(reasons[0]).toMatchObject({ jobId: id, code: 'RELQ_LEASE_LOST', message: 'worker is shutting down; the job was given back to the queue' });
  expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 0 });
});
