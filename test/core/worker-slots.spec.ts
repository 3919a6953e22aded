/**
 * A worker's slots: every way a slot is taken and given back (ack, nack, lost lease, timeout,
 * rate-limit hold, give-back at shutdown, a handler that never settles) leaves the worker
 * leasing again. Each test watches one worker, not a fleet: a worker that silently stops
 * leasing fails here even while another would drain the queue.
 */
import { BatchWorker, Worker, type Job, type WorkerEvent } from '../../lib/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

const never = new Promise<never>(() => undefined);

describe('a lost lease gives its slot back', () => {
  test('concurrency 1: after a forced remove of the running job, the next job starts', async () => {
    const q = res.queue('d1');
    const started: string[] = [];
    const events: Array<WorkerEvent<unknown, unknown>['type']> = [];
    const w = res.worker(
      new Worker(
        q,
        async (job) => {
          started.push(job.id);
          if (job.id === 'a') await aborted(job.signal);
        },
        { concurrency: 1, leaseMs: 600 },
      ),
    );
    w.events.subscribe((e) => events.push(e.type));
    await q.add({}, { jobId: 'a' });
    await q.add({}, { jobId: 'b' });
    await waitUntil(() => started.includes('a'), "job 'a' started");
    await q.remove('a', { force: true });
    await waitUntil(() => events.includes('lost'), "'lost' reported", 5000);
    await waitUntil(() => started.includes('b'), "job 'b' started after 'a' was lost", 5000);
    await waitUntil(async () => (await q.getJob('b'))?.state === 'completed', "'b' completed", 5000);
    expect(w.inFlight).toBe(0);
  });

  test('a handler that ignores its aborted signal does not keep the slot: its late outcome is dropped', async () => {
    const q = res.queue('ignores');
    const started: string[] = [];
    let release!: () => void;
    const late = new Promise<void>((resolve) => (release = resolve));
    const w = res.worker(
      new Worker(
        q,
        async (job) => {
          started.push(job.id);
          if (job.id === 'a') {
            await late; // never looks at job.signal
            return 'late';
          }
          return 'ok';
        },
        { concurrency: 1, leaseMs: 600 },
      ),
    );
    const completed: string[] = [];
    w.events.subscribe((e) => e.type === 'completed' && completed.push(e.job.id));
    await q.add({}, { jobId: 'a' });
    await q.add({}, { jobId: 'b' });
    await waitUntil(() => started.includes('a'), "job 'a' started");
    await q.remove('a', { force: true });
    await waitUntil(() => completed.includes('b'), "'b' completed while 'a's handler still runs", 5000);
    expect(w.inFlight).toBe(0);
    release();
    await new Promise((r) => setImmediate(r));
    // 'a' was removed: its handler's late return settles nothing and reports nothing.
    expect(completed).toEqual(['b']);
    expect(await q.getJob('a')).toBeNull();
  });

  test('concurrency 3: losing three running jobs in turn takes no slot away', async () => {
    const q = res.queue('c3');
    const running = new Set<string>();
    let most = 0;
    let threeAtOnce = false;
    const hold = new Set(['l1', 'l2', 'l3']);
    const w = res.worker(
      new Worker(
        q,
        async (job: Job<unknown>) => {
          running.add(job.id);
          most = Math.max(most, running.size);
          try {
            if (hold.has(job.id)) await aborted(job.signal);
            else {
              // x, y and z each wait until all three ran at once
              if (running.size === 3) threeAtOnce = true;
              await waitUntil(() => threeAtOnce, 'x, y and z at once', 5000);
            }
          } finally {
            running.delete(job.id);
          }
        },
        { concurrency: 3, leaseMs: 600 },
      ),
    );
    for (const id of hold) await q.add({}, { jobId: id });
    await waitUntil(() => running.size === 3, 'three held jobs running');
    for (const id of hold) {
      await q.remove(id, { force: true });
      await waitUntil(() => !running.has(id), `${id} aborted`, 5000);
    }
    await q.addBulk(['x', 'y', 'z'].map((jobId) => ({ data: {}, opts: { jobId } })));
    await waitUntil(async () => (await q.counts()).completed === 3, 'x, y, z completed', 5000);
    expect(threeAtOnce).toBe(true);
    expect(most).toBe(3);
    expect(w.inFlight).toBe(0);
  });

  test('a lease that expired while its handler ran (no heartbeat) and was swept: the worker leases again', async () => {
    const q = res.queue('expired');
    const sweeper = res.twin(q);
    const started: string[] = [];
    let touched: boolean | undefined;
    let release!: () => void;
    const go = new Promise<void>((resolve) => (release = resolve));
    const w = res.worker(
      new Worker(
        q,
        async (job) => {
          started.push(`${job.id}#${job.attempt}`);
          if (job.id === 'a' && job.attempt === 1) {
            await go;
            touched = await job.touch(); // finds the lease gone
            await never; // and never settles
          }
        },
        { concurrency: 1, leaseMs: 300, heartbeat: false },
      ),
    );
    await q.add({}, { jobId: 'a' });
    await waitUntil(() => started.includes('a#1'), "job 'a' started");
    await waitUntil(async () => (await sweeper.sweep()).stalled === 1, "a sweep returned 'a'", 5000, 50);
    release();
    await waitUntil(() => started.includes('a#2'), "'a' leased again by the same worker", 5000);
    expect(touched).toBe(false);
    await waitUntil(async () => (await q.getJob('a'))?.state === 'completed', "'a' completed", 5000);
    expect(w.inFlight).toBe(0);
  });
});

describe('BatchWorker: a batch whose every job is lost frees its lane', () => {
  test('the handler ignores the signal; the next batch runs anyway', async () => {
    const q = res.queue('batch-lost');
    const batches: string[][] = [];
    const w = res.worker(
      new BatchWorker(
        q,
        async (jobs) => {
          batches.push(jobs.map((j) => j.id));
          if (jobs.some((j) => j.id.startsWith('a'))) await never;
        },
        { size: 2, concurrency: 1, leaseMs: 600 },
      ),
    );
    await q.addBulk(['a1', 'a2'].map((jobId) => ({ data: {}, opts: { jobId } })));
    await waitUntil(() => batches.length === 1, 'first batch');
    await q.remove('a1', { force: true });
    await q.remove('a2', { force: true });
    await q.addBulk(['b1', 'b2'].map((jobId) => ({ data: {}, opts: { jobId } })));
    await waitUntil(async () => (await q.counts()).completed === 2, 'second batch completed', 5000);
    expect(batches[1]).toEqual(['b1', 'b2']);
    expect(w.inFlight).toBe(0);
  });
});
