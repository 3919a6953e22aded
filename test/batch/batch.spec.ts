/**
 * Batch handlers (BatchWorker): one lease call per batch, one settle for its outcomes,
 * partial failures, size and waitMs, heartbeats over the whole batch, and a SIGKILLed batch
 * process whose jobs all come back after their leases expire.
 */
import { join } from 'node:path';
import { BatchWorker, UnrecoverableError, type BatchOutcome, type Job } from '../../lib/index.js';
import { buildEngine, forkChild, type BuiltEngine, type EngineChild } from '../support/engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { Gate, Resources, blockedClients, commandStats, commandsPerIdleAdd, consumerIdle, redisNow, scriptCalls, statsDelta, untilRedisTime, waitUntil } from '../support/engine-harness.js';
import { internalsOf } from '../../lib/core/queue/internals.js';

const FIXTURE = join(process.cwd(), 'test', 'batch', 'fixtures', 'batch-child.mjs');
let redis: TestRedis;
let engine: BuiltEngine | undefined;
const children: EngineChild[] = [];
const res = new Resources(() => redis);
const batchWorkers: Array<BatchWorker<any, any>> = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill()));
  await Promise.all(batchWorkers.splice(0).map((w) => w.close({ drainTimeoutMs: 0 })));
  await res.closeAll();
});
afterAll(async () => {
  engine?.remove();
  await redis.stop();
});

function track<W extends BatchWorker<any, any>>(w: W): W {
  batchWorkers.push(w);
  return w;
}

/** A promise and the function that resolves it. */
function gateOpen(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

test('per-job outcomes: completed with results, failed (retried), dead at once', async () => {
  const q = res.queue<number, string>('b1');
  await q.addBulk([1, 2, 3, 4].map((data) => ({ data, opts: { attempts: 3, backoff: { type: 'fixed' as const, delayMs: 0 } } })));
  const sizes: number[] = [];
  track(
    new BatchWorker(res.twin<number, string>(q), (jobs: Array<Job<number>>): Array<BatchOutcome<string>> => {
      sizes.push(jobs.length);
      return jobs.map((j) => {
        if (j.data === 2 && j.attempt === 1) return { ok: false, error: new Error('flaky') };
        if (j.data === 3) return { ok: false, error: 'bad input', retry: false };
        return { ok: true, result: `r${j.data}` };
      });
    }, { size: 10, blockMs: 200 }),
  );
  await waitUntil(async () => (await q.counts()).completed === 3, '3 completed');
  const c = await q.counts();
  expect(c).toMatchObject({ completed: 3, dead: 1, pending: 0, working: 0 });
  expect(sizes[0]).toBe(4);
  const dead = await q.listDead();
  expect(dead.map((d) => d.data)).toEqual([3]);
  expect(dead[0]!.lastError).toContain('bad input');
});

test('a throw fails every job of the batch; UnrecoverableError dead-letters them all', async () => {
  const q = res.queue<number>('b2');
  await q.addBulk([1, 2, 3].map((data) => ({ data, opts: { attempts: 2, backoff: { type: 'fixed' as const, delayMs: 0 } } })));
  let calls = 0;
  const attempts: number[][] = [];
  track(
    new BatchWorker(res.twin<number>(q), (jobs) => {
      calls += 1;
      attempts.push(jobs.map((j) => j.attempt));
      if (calls === 1) throw new Error('boom');
      throw new UnrecoverableError('give up');
    }, { size: 10, blockMs: 200 }),
  );
  await waitUntil(async () => (await q.counts()).dead === 3, 'all dead');
  expect(attempts).toEqual([[1, 1, 1], [2, 2, 2]]);
  expect((await q.listDead()).every((d) => d.lastError?.includes('give up'))).toBe(true);
});

test('a result of the wrong length fails the batch with a clear error', async () => {
  const q = res.queue<number>('b3');
  await q.addBulk([1, 2].map((data) => ({ data, opts: { attempts: 1 } })));
  track(new BatchWorker(res.twin<number>(q), () => [{ ok: true }], { size: 10, blockMs: 200 }));
  await waitUntil(async () => (await q.counts()).dead === 2, 'both dead');
  expect((await q.listDead())[0]!.lastError).toMatch(/array of 2 outcomes/);
});

test('size is honoured: 25 jobs in batches of at most 10', async () => {
  const q = res.queue<number>('b4');
  await q.addBulk(Array.from({ length: 25 }, (_, data) => ({ data })));
  const sizes: number[] = [];
  track(new BatchWorker(res.twin<number>(q), (jobs) => void sizes.push(jobs.length), { size: 10, blockMs: 200 }));
  await waitUntil(() => sizes.reduce((a, b) => a + b, 0) === 25, 'all 25');
  expect(sizes).toEqual([10, 10, 5]);
});

test('waitMs: a batch waits for more jobs up to waitMs after its first; without it, it runs at once', async () => {
  const q = res.queue<number>('b5');
  const WAIT_MS = 1500;
  const batches: Array<{ size: number; at: number }> = [];
  let t0 = 0;
  track(new BatchWorker(res.twin<number>(q), (jobs) => void batches.push({ size: jobs.length, at: Date.now() - t0 }), { size: 10, waitMs: WAIT_MS, blockMs: 15_000 }));
  t0 = Date.now();
  await q.addBulk([1, 2, 3].map((data) => ({ data })));
  // the batch holds its first jobs and waits for more
  await waitUntil(async () => (await q.counts()).working === 3, 'the first three held', 10_000);
  await q.addBulk([4, 5].map((data) => ({ data })));
  await waitUntil(async () => (await q.counts()).working === 5, 'five held', 10_000);
  expect(batches).toEqual([]);
  await q.addBulk([6, 7, 8, 9, 10, 11, 12].map((data) => ({ data }))); // fills the batch: runs now
  await waitUntil(() => batches.reduce((a, b) => a + b.size, 0) === 12, 'all 12', 10_000);
  expect(batches[0]!.size).toBe(10);
  expect(batches[0]!.at).toBeLessThan(WAIT_MS); // full before waitMs ran out
  expect(batches[1]!.size).toBe(2);

  // without waitMs a batch runs at once: the first job's batch has run before a second job comes
  const q2 = res.queue<number>('b5b');
  const sizes: number[] = [];
  track(new BatchWorker(res.twin<number>(q2), (jobs) => void sizes.push(jobs.length), { size: 10, blockMs: 15_000 }));
  await q2.add(1);
  await waitUntil(() => sizes.length === 1, 'the first batch, at once', 3000);
  await q2.add(2);
  await waitUntil(() => sizes.length === 2, 'two batches', 10_000);
  expect(sizes).toEqual([1, 1]);

  // waitMs runs out: the batch goes with what it has
  const q3 = res.queue<number>('b5c');
  const got: Array<{ size: number; waited: number }> = [];
  let firstAddAt = 0;
  track(new BatchWorker(res.twin<number>(q3), (jobs) => void got.push({ size: jobs.length, waited: Date.now() - firstAddAt }), { size: 10, waitMs: 500, blockMs: 15_000 }));
  firstAddAt = Date.now();
  await q3.addBulk([1, 2].map((data) => ({ data })));
  await waitUntil(() => got.length === 1, 'one batch', 10_000);
  expect(got[0]!.size).toBe(2);
  expect(got[0]!.waited).toBeGreaterThanOrEqual(480);
  expect(got[0]!.waited).toBeLessThan(5000); // at the end of waitMs, not of the 15 s block
});

test('one round trip per batch: 99 jobs in batches of 33 take 4 script calls (each lease settles the previous batch)', async () => {
  const q = res.queue<number>('b6');
  const obs = res.client();
  await q.addBulk(Array.from({ length: 100 }, (_, data) => ({ data })));
  const lq = res.twin<number>(q);
  await lq.lease({ count: 1 }).then((l) => lq.ackBatch(l)); // loads the lease and settle scripts
  let batches = 0;
  let completed = 0;
  const before = await commandStats(obs);
  const w = track(new BatchWorker(lq, () => void (batches += 1), { size: 33, blockMs: 60_000 }));
  w.events.subscribe((e) => e.type === 'completed' && (completed += 1));
  await waitUntil(() => completed === 99, 'all completed', 10_000);
  // and the worker waits on Redis again: every call it makes for these jobs has been made
  await waitUntil(async () => (await blockedClients(obs)) === 1, 'the worker blocked on Redis', 10_000);
  const d = statsDelta(before, await commandStats(obs));
  // lease(33) -> run -> lease+settle -> run -> lease+settle -> run -> settle (+ lease: none) -> block
  expect(batches).toBe(3);
  expect(d.fcall).toBe(4);
  expect(d.touch ?? 0).toBe(0);
  expect(await q.counts()).toMatchObject({ completed: 100, pending: 0, working: 0 });
});

test('heartbeats cover the whole batch: a batch running past its lease keeps every job', async () => {
  const q = res.queue<number>('b7');
  const obs = res.client();
  const LEASE_MS = 600;
  await q.addBulk(Array.from({ length: 5 }, (_, data) => ({ data })));
  const lost: string[] = [];
  const attempts: number[] = [];
  const aborted: boolean[] = [];
  const gate = gateOpen();
  let ids: string[] = [];
  const w = track(
    new BatchWorker(res.twin<number>(q), async (jobs) => {
      ids = jobs.map((j) => j.id);
      await gate.opened;
      for (const j of jobs) attempts.push(j.attempt);
      aborted.push(...jobs.map((j) => j.signal.aborted));
    }, { size: 10, leaseMs: LEASE_MS, blockMs: 200 }),
  );
  w.events.subscribe((e) => e.type === 'lost' && lost.push(e.job.id));
  try {
    await waitUntil(() => ids.length === 5, 'the batch started', 10_000);
    const first = Math.max(...(await Promise.all(ids.map(async (id) => (await q.getJob(id))!.leaseDeadline!))));
    // The batch runs on, with sweeps every ~50 ms, until a sweep that began two more lease
    // lengths after its first deadline.
    const seen = new Set<string>();
    await waitUntil(
      async () => {
        const began = await redisNow(obs);
        await q.sweep();
        for (const id of ids) seen.add((await q.getJob(id))!.state);
        return began > first + 2 * LEASE_MS;
      },
      'a sweep two lease lengths past the first deadline',
      15_000,
      50,
    );
    expect([...seen]).toEqual(['working']);
  } finally {
    gate.open();
  }
  await waitUntil(async () => (await q.counts()).completed === 5, 'all completed', 10_000);
  expect(lost).toEqual([]);
  expect(attempts).toEqual([1, 1, 1, 1, 1]);
  expect(aborted).toEqual([false, false, false, false, false]);
});

test('close() during a batch waits for it (drainTimeoutMs), then gives unfinished jobs back', async () => {
  const q = res.queue<number>('b8');
  await q.addBulk([1, 2, 3].map((data) => ({ data })));
  let started = false;
  let aborted = false;
  const w = new BatchWorker(res.twin<number>(q), async (jobs) => {
    started = true;
    await new Promise<void>((resolve) => jobs[0]!.signal.addEventListener('abort', () => resolve()));
    aborted = true;
  }, { size: 10, blockMs: 200 });
  await waitUntil(() => started, 'batch started');
  await w.close({ drainTimeoutMs: 100 });
  expect(aborted).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 3, working: 0 });
  const [l] = await q.lease();
  expect(l!.job.attempt).toBe(1); // given back without a failed attempt
});

test('a SIGKILLed batch process: every job of its batch is redelivered after expiry, none lost', async () => {
  engine ??= buildEngine();
  const prefix = uniquePrefix();
  const q = res.queue<number>('b9', { prefix });
  await q.addBulk(Array.from({ length: 15 }, (_, data) => ({ data })));
  const child = forkChild(engine, FIXTURE, { REDIS_URL: redis.url, PREFIX: prefix, NAME: 'b9', SIZE: 10, LEASE_MS: 500 });
  children.push(child);
  const { ids } = await child.waitFor((m) => m.type === 'batch');
  expect(ids).toHaveLength(10);
  await child.kill('SIGKILL');
  expect((await q.counts()).working).toBe(10);
  const deadlines = await Promise.all((ids as string[]).map(async (id) => (await q.getJob(id))!.leaseDeadline!));
  await untilRedisTime(res.client(), Math.max(...deadlines), 'the dead batch\'s leases to run out');
  expect((await q.sweep()).stalled).toBe(10);
  const seen = new Map<string, number>();
  track(
    new BatchWorker(res.twin<number>(q), (jobs) => {
      for (const j of jobs) seen.set(j.id, j.attempt);
    }, { size: 100, blockMs: 200 }),
  );
  await waitUntil(() => seen.size === 15, 'all 15 done');
  for (const id of ids as string[]) expect(seen.get(id)).toBe(2); // redelivered: second attempt
  expect([...seen.values()].filter((a) => a === 1)).toHaveLength(5);
  expect(await q.counts()).toMatchObject({ completed: 15, pending: 0, working: 0, dead: 0 });
});

describe('concurrency: several batches at once', () => {
  test('two lanes run two batches at the same time, never more; every job is settled once', async () => {
    const q = res.queue<number>('c1');
    await q.addBulk(Array.from({ length: 60 }, (_, data) => ({ data })));
    const gate = new Gate();
    const seen: number[] = [];
    const w = track(
      new BatchWorker(res.twin<number>(q), async (jobs) => {
        await gate.enter();
        for (const j of jobs) seen.push(j.data);
      }, { size: 10, concurrency: 2, blockMs: 200 }),
    );
    let completed = 0;
    w.events.subscribe((e) => e.type === 'completed' && (completed += 1));
    await waitUntil(() => gate.running === 2, 'two batches running', 10_000);
    await gate.openUntil(6, 'all six batches ran');
    await waitUntil(() => completed === 60, 'all 60 completed', 10_000);
    expect(gate.most).toBe(2);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(await q.counts()).toMatchObject({ completed: 60, pending: 0, working: 0 });
  });

  test('lanes share one blocking wait (one BLPOP at a time on the connection), and adds still wake them at once', async () => {
    const q = res.queue<number>('c2');
    const wq = res.twin<number>(q);
    // Instrumentation only: counts the waits in flight on the worker's blocking connection.
    let waiting = 0;
    let peakWaiting = 0;
    const internals = internalsOf<number>(wq)!;
    const waitForWork = internals.waitForWork.bind(internals);
    internals.waitForWork = async (blocker, ms) => {
      waiting += 1;
      peakWaiting = Math.max(peakWaiting, waiting);
      try {
        return await waitForWork(blocker, ms);
      } finally {
        waiting -= 1;
      }
    };
    const batches: number[] = [];
    const obs = res.client();
    track(new BatchWorker(wq, (jobs) => void batches.push(jobs.length), { size: 10, waitMs: 100, concurrency: 3, blockMs: 15_000 }));
    // every lane found the queue empty: one of them waits on Redis, the others behind it
    const idle = (done: number) =>
      waitUntil(async () => (await q.counts()).completed === done && (await blockedClients(obs)) === 1, 'the lanes idle', 10_000);
    await idle(0);
    for (let round = 1; round <= 3; round++) {
      const t0 = Date.now();
      const total = (round * (round + 1)) / 2;
      await q.addBulk(Array.from({ length: round }, (_, data) => ({ data })));
      await waitUntil(() => batches.reduce((a, b) => a + b, 0) === total, `round ${round} done`, 10_000);
      expect(Date.now() - t0).toBeLessThan(5000); // woken by the add (then waitMs), not at the end of the 15 s block
      await idle(total);
    }
    expect(peakWaiting).toBe(1);
  });

  test('a job added to idle lanes costs one lease call, not one per lane; a full batch lets the others lease too', async () => {
    const q = res.queue<number>('c6');
    const obs = res.client();
    const sizes: number[] = [];
    track(new BatchWorker(res.twin<number>(q), (jobs) => void sizes.push(jobs.length), { size: 10, concurrency: 3, blockMs: 5000 }));
    await q.add(0); // warm-up: the library is loaded, every lane ends up idle
    await waitUntil(() => sizes.length === 1, 'warm-up batch');
    const deltas = await commandsPerIdleAdd(q, obs, () => sizes.length);
    // the add, one lease, the lease call that settles it
    expect(deltas.map(scriptCalls)).toEqual([3, 3, 3, 3, 3]);
    // 35 jobs at once: the first lane's full batch releases the others, which lease too.
    const gate = new Gate();
    const q2 = res.queue<number>('c7');
    track(new BatchWorker(res.twin<number>(q2), (jobs) => gate.enter(jobs.length), { size: 10, concurrency: 3, blockMs: 5000 }));
    await consumerIdle(obs, q2, 'both workers waiting on Redis', 2);
    await q2.addBulk(Array.from({ length: 35 }, (_, data) => ({ data })));
    await waitUntil(() => gate.running === 30, 'three batches running');
    await gate.openUntil(4, 'all four batches ran');
    expect(gate.most).toBe(30);
  });

  test('close() waits for every running batch, then gives the unfinished ones back', async () => {
    const q = res.queue<number>('c3');
    await q.addBulk(Array.from({ length: 6 }, (_, data) => ({ data })));
    let started = 0;
    const w = new BatchWorker(res.twin<number>(q), async (jobs) => {
      started += 1;
      if (jobs.some((j) => j.data < 3)) return; // the first batch finishes
      await new Promise<void>((resolve) => jobs[0]!.signal.addEventListener('abort', () => resolve()));
    }, { size: 3, concurrency: 2, blockMs: 200 });
    await waitUntil(() => started === 2, 'two batches started');
    expect(w.inFlight).toBe(3); // the finished batch is no longer held
    await w.close({ drainTimeoutMs: 100 });
    expect(await q.counts()).toMatchObject({ completed: 3, pending: 3, working: 0 });
  });

  test('a closed and drained queue stops every lane, with one stopped event', async () => {
    const q = res.queue<number>('c4');
    await q.addBulk([1, 2].map((data) => ({ data })));
    const w = track(new BatchWorker(res.twin<number>(q), () => undefined, { size: 1, concurrency: 4, blockMs: 200 }));
    const stopped: string[] = [];
    w.events.subscribe((e) => e.type === 'stopped' && stopped.push(e.reason));
    await waitUntil(async () => (await q.counts()).completed === 2, 'both done');
    await q.closeQueue();
    await waitUntil(() => !w.isRunning && stopped.length > 0, 'worker stopped');
    await w.close(); // the shutdown it began is over: no lane can report anything more
    expect(stopped).toEqual(['queue closed']);
  });

  test('concurrency is checked before anything runs', () => {
    const q = res.queue<number>('c5');
    for (const concurrency of [0, 65, 1.5]) {
      expect(() => new BatchWorker(q, () => undefined, { size: 10, concurrency, autostart: false })).toThrow(/concurrency: must be/);
    }
  });
});
