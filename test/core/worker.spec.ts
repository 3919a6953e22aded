import type { Redis } from 'ioredis';
import { UnrecoverableError, Worker, type JobInfo, type Queue, type WorkerEvent } from '../../lib/index.js';
import { Gate, blockedClients, commandsPerIdleAdd, consumerIdle, redisNow, scriptCalls, useRedis, sleep, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();

/** Runs `fn` every `ms` until the returned stop() is awaited. */
function every(ms: number, fn: () => Promise<unknown>): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await fn().catch(() => undefined);
      await sleep(ms);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** A promise and the function that resolves it. */
function gateOpen(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Sweeps `sweeper` every ~40 ms until a sweep that began after Redis time `until` is done;
 * returns what `job()` showed after each sweep ("state failures=… dequeues=…", each once).
 */
async function sweepUntil(sweeper: Queue<any, any>, obs: Redis, until: number, job: () => Promise<JobInfo<any, any> | null>): Promise<string[]> {
  const seen = new Set<string>();
  await waitUntil(
    async () => {
      const began = await redisNow(obs);
      await sweeper.sweep();
      const info = await job();
      seen.add(`${info?.state} failures=${info?.failures} dequeues=${info?.dequeues}`);
      return began > until;
    },
    `a sweep begun after ${until}`,
    15_000,
    40,
  );
  return [...seen];
}

describe('Worker', () => {
  test('8 workers on 8 connections drain 1,000 jobs: each delivered exactly once', async () => {
    const q = res.queue<number>('drain');
    const n = 1000;
    const deliveries = new Map<number, number>();
    let done = 0;
    const workers = Array.from({ length: 8 }, () => {
      const own = res.twin<number>(q);
      const w = res.worker(
        new Worker<number>(
          own,
          async (job) => {
            deliveries.set(job.data, (deliveries.get(job.data) ?? 0) + 1);
            if (Math.random() < 0.1) await sleep(1);
          },
          { concurrency: 8, blockMs: 1000, leaseMs: 10_000 },
        ),
      );
      w.events.subscribe((e) => {
        if (e.type === 'completed') done += 1;
      });
      return w;
    });
    await q.addBulk(Array.from({ length: n }, (_, data) => ({ data })));
    await waitUntil(() => done === n, '1,000 completions', 20_000);
    expect(deliveries.size).toBe(n);
    expect([...deliveries.values()].every((c) => c === 1)).toBe(true);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: n, dead: 0 });
    await Promise.all(workers.map((w) => w.close()));
  });

  test('concurrency is honoured: never more handlers at once than allowed, and it is reached', async () => {
    const q = res.queue<number>();
    const gate = new Gate();
    res.worker(new Worker<number>(q, () => gate.enter(), { concurrency: 4, blockMs: 1000 }));
    await q.addBulk(Array.from({ length: 16 }, (_, data) => ({ data })));
    await waitUntil(() => gate.running === 4, 'four handlers running', 10_000);
    await gate.openUntil(16, 'all jobs');
    expect(gate.most).toBe(4);
  });

  test('a failing handler is retried with backoff, then dead-lettered', async () => {
    const q = res.queue<string>();
    const attempts: number[] = [];
    const events: Array<WorkerEvent<string, unknown>> = [];
    const w = res.worker(
      new Worker<string>(
        q,
        async (job) => {
          attempts.push(job.attempt);
          throw new Error(`fail ${job.attempt}`);
        },
        { blockMs: 2000 },
      ),
    );
    w.events.subscribe((e) => events.push(e));
    const { id } = await q.add('x', { attempts: 3, backoff: { type: 'fixed', delayMs: 50, jitter: 0 } });
    await waitUntil(async () => (await q.getJob(id))?.state === 'dead', 'dead letter', 5000);
    expect(attempts).toEqual([1, 2, 3]);
    expect(await q.getJob(id)).toMatchObject({ state: 'dead', failures: 3, lastError: 'Error: fail 3' });
    await waitUntil(() => events.some((e) => e.type === 'dead'), 'dead event');
    const failed = events.filter((e) => e.type === 'failed') as Array<Extract<WorkerEvent<string, unknown>, { type: 'failed' }>>;
    expect(failed.map((e) => e.willRetry)).toEqual([true, true, false]);
    expect(events.filter((e) => e.type === 'dead')).toHaveLength(1);
  });

  test('UnrecoverableError and job.reject() dead-letter at once', async () => {
    const q = res.queue<string>();
    let calls = 0;
    res.worker(
      new Worker<string>(
        q,
        async (job) => {
          calls += 1;
          if (job.data === 'throw') throw new UnrecoverableError('never');
          job.reject('refused');
        },
        { blockMs: 1000 },
      ),
    );
    const a = await q.add('throw', { attempts: 5 });
    const b = await q.add('reject', { attempts: 5 });
    await waitUntil(async () => (await q.counts()).dead === 2, 'two dead letters');
    expect(calls).toBe(2);
    expect((await q.getJob(a.id))!.lastError).toContain('never');
    expect((await q.getJob(b.id))!.lastError).toContain('refused');
  });

  test('the handler result is stored; a result that is not JSON counts as a failure', async () => {
    const q = res.queue<string, unknown>();
    res.worker(new Worker<string, unknown>(q, async (job) => (job.data === 'bad' ? { n: 1n } : { ok: job.data }), { blockMs: 1000 }));
    const good = await q.add('good');
    const bad = await q.add('bad', { attempts: 1 });
    await waitUntil(async () => (await q.counts()).completed === 1 && (await q.counts()).dead === 1, 'both settled');
    expect((await q.getJob(good.id))!.result).toEqual({ ok: 'good' });
    expect((await q.getJob(bad.id))!.lastError).toMatch(/BigInt/);
  });

  test('heartbeat keeps a job of 3x leaseMs leased while sweeps run', async () => {
    const q = res.queue<string>();
    const sweeper = res.twin<string>(q);
    const obs = res.client();
    const events: string[] = [];
    const gate = gateOpen();
    const LEASE_MS = 600;
    let calls = 0;
    const w = res.worker(
      new Worker<string>(
        q,
        async () => {
          calls += 1;
          await gate.opened;
          return 'finished';
        },
        { leaseMs: LEASE_MS, blockMs: 1000 },
      ),
    );
    w.events.subscribe((e) => events.push(e.type));
    const { id } = await q.add('long');
    try {
      await waitUntil(() => calls === 1, 'handler start', 10_000);
      const first = (await q.getJob(id))!;
      expect(first.state).toBe('working');
      // the handler runs on until a sweep that began two more lease lengths after the first deadline
      const seen = await sweepUntil(sweeper, obs, first.leaseDeadline! + 2 * LEASE_MS, () => q.getJob(id));
      expect(seen).toEqual(['working failures=0 dequeues=1']);
    } finally {
      gate.open();
    }
    await waitUntil(() => events.includes('completed') || events.includes('lost'), 'the worker settling the job', 10_000);
    const info = await q.getJob(id);
    expect(info).toMatchObject({ state: 'completed', failures: 0, result: 'finished', dequeues: 1 });
    expect(calls).toBe(1);
    expect(events).not.toContain('lost');
  });

  test("heartbeat honours a job's own leaseMs that is shorter than the worker's", async () => {
    const q = res.queue<string>();
    const sweeper = res.twin<string>(q);
    const obs = res.client();
    const events: string[] = [];
    const gate = gateOpen();
    const LEASE_MS = 600;
    let calls = 0;
    const w = res.worker(
      new Worker<string>(
        q,
        async () => {
          calls += 1;
          await gate.opened;
        },
        { leaseMs: 10_000, blockMs: 1000 },
      ),
    );
    w.events.subscribe((e) => events.push(e.type));
    const { id } = await q.add('short lease', { leaseMs: LEASE_MS, attempts: 5 });
    try {
      await waitUntil(() => calls === 1, 'handler start', 10_000);
      const first = (await q.getJob(id))!;
      expect(first.state).toBe('working');
      expect(first.leaseDeadline! - (await redisNow(obs))).toBeLessThanOrEqual(LEASE_MS); // the job's lease, not the worker's
      const seen = await sweepUntil(sweeper, obs, first.leaseDeadline! + 2 * LEASE_MS, () => q.getJob(id));
      expect(seen).toEqual(['working failures=0 dequeues=1']);
    } finally {
      gate.open();
    }
    await waitUntil(() => events.includes('completed') || events.includes('lost'), 'the worker settling the job', 10_000);
    expect(events).not.toContain('lost');
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', failures: 0, dequeues: 1 });
    expect(calls).toBe(1);
  });

  test('without heartbeat the same job is lost to the sweeper and the worker says so', async () => {
    const q = res.queue<string>();
    const sweeper = res.twin<string>(q);
    const events: string[] = [];
    const w = res.worker(new Worker<string>(q, async () => void (await sleep(500)), { leaseMs: 150, blockMs: 1000, heartbeat: false }));
    w.events.subscribe((e) => events.push(e.type));
    const stop = every(40, () => sweeper.sweep());
    try {
      const { id } = await q.add('long', { attempts: 5 });
      await waitUntil(() => events.includes('lost'), 'lost event', 10_000);
      expect((await q.getJob(id))!.failures).toBeGreaterThanOrEqual(1);
    } finally {
      await stop();
    }
  });

  test('job.touch() extends the lease and job.deadline follows', async () => {
    const q = res.queue<string>();
    const seen: Array<[number, number, boolean]> = [];
    res.worker(
      new Worker<string>(
        q,
        async (job) => {
          const before = job.deadline;
          const ok = await job.touch(10_000);
          seen.push([before, job.deadline, ok]);
        },
        { leaseMs: 1000, blockMs: 1000, heartbeat: false },
      ),
    );
    await q.add('x');
    await waitUntil(() => seen.length === 1, 'handler');
    const [before, after, ok] = seen[0]!;
    expect(ok).toBe(true);
    expect(after - before).toBeGreaterThanOrEqual(8900);
  });

  test('close() during a long job gives it back to pending at once (no failure); another worker completes it', async () => {
    const q = res.queue<string>();
    let started = false;
    let aborted = false;
    const a = res.worker(
      new Worker<string>(
        q,
        async (job) => {
          started = true;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 20_000);
            job.signal.addEventListener('abort', () => {
              clearTimeout(t);
              aborted = true;
              resolve();
            });
          });
          throw new Error('interrupted');
        },
        { leaseMs: 10_000, blockMs: 1000 },
      ),
    );
    const { id } = await q.add('long', { attempts: 3 });
    await waitUntil(() => started, 'handler start');
    const t = Date.now();
    await within(a.close({ drainTimeoutMs: 100 }), 8000, 'worker close');
    expect(Date.now() - t).toBeLessThan(5000); // drain 100 ms and the give-back, not the 20 s handler or the 10 s lease
    expect(aborted).toBe(true);
    expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });

    const attempts: number[] = [];
    res.worker(new Worker<string>(res.twin<string>(q), async (job) => void attempts.push(job.attempt), { blockMs: 1000 }));
    await waitUntil(async () => (await q.getJob(id))?.state === 'completed', 'completion by the second worker');
    expect(attempts).toEqual([1]);
    expect(await q.getJob(id)).toMatchObject({ failures: 0, requeues: 1 });
  });

  test('close() lets a handler that finishes within drainTimeoutMs complete normally', async () => {
    const q = res.queue<string>();
    let started = false;
    const w = res.worker(
      new Worker<string>(
        q,
        async () => {
          started = true;
          await sleep(200);
          return 'ok';
        },
        { blockMs: 1000 },
      ),
    );
    const { id } = await q.add('x');
    await waitUntil(() => started, 'handler start');
    await w.close({ drainTimeoutMs: 10_000 });
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'ok', requeues: 0 });
  });

  test('a job added to an idle worker costs one lease call: the second lane leases only when the first filled its slots', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    let done = 0;
    res.worker(new Worker<number>(res.twin<number>(q), async () => void (done += 1), { concurrency: 10, blockMs: 5000 }));
    await q.add(0); // warm-up: the library is loaded, both lanes end up idle
    await waitUntil(() => done === 1, 'warm-up job');
    const deltas = await commandsPerIdleAdd(q, obs, () => done);
    expect(deltas.map(scriptCalls)).toEqual([3, 3, 3, 3, 3]); // add, one lease, the ack
    expect(deltas.map((d) => d.lpop)).toEqual([1, 1, 1, 1, 1]);
    // A burst fills the first lane's 5 slots, so the second lane leases too: all 10 run at once.
    const gate = new Gate();
    const q2 = res.queue<number>();
    res.worker(new Worker<number>(res.twin<number>(q2), () => gate.enter(), { concurrency: 10, blockMs: 5000 }));
    await consumerIdle(obs, q2, 'both workers waiting on Redis', 2);
    await q2.addBulk(Array.from({ length: 12 }, (_, data) => ({ data })));
    await waitUntil(() => gate.running === 10, 'ten running');
    await gate.openUntil(12, 'all 12 ran');
    expect(gate.most).toBe(10);
  });

  test('close() on an idle worker blocked on an empty queue returns promptly', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const w = res.worker(new Worker<string>(q, async () => undefined, { blockMs: 10_000 }));
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the worker blocked on Redis', 10_000);
    const t = Date.now();
    await within(w.close(), 8000, 'idle close');
    expect(Date.now() - t).toBeLessThan(5000); // not the 10 s block
    expect(w.isRunning).toBe(false);
  });
});
