/**
 * A worker's own controls while it runs: `worker.concurrency = n` (used at once, raised or
 * lowered) and `worker.pause()` / `resume()` (this worker leases nothing; the queue and its
 * other workers go on; running jobs finish, heartbeated). The idle waits use a long blockMs,
 * so that a control that waited for the blocking wait to end misses its deadline.
 */
import { BatchWorker, ValidationError, Worker, type Job } from '../../lib/index.js';
import { blockedClients, untilRedisTime, useRedis, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();
const LONG_BLOCK = 30_000;

/** Holds handlers until released: `enter(weight)` counts a handler (or a batch of `weight` jobs) as running. */
class Gate {
  running = 0;
  most = 0;
  private open = false;
  private readonly waiting: Array<() => void> = [];

  async enter(weight = 1): Promise<void> {
    this.running += weight;
    this.most = Math.max(this.most, this.running);
    if (!this.open) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running -= weight;
  }

  /** Lets every handler through, now and from now on. */
  release(): void {
    this.open = true;
    for (const go of this.waiting.splice(0)) go();
  }
}

async function addMany(q: { add: (d: unknown, o: { jobId: string }) => Promise<unknown> }, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await q.add({}, { jobId: `${prefix}${i}` });
}

describe('worker.concurrency set at run time', () => {
  test('raised: the new slots are leased at once, not after a running handler ends', async () => {
    const q = res.queue('raise');
    const gate = new Gate();
    const w = res.worker(new Worker(q, () => gate.enter(), { concurrency: 1, blockMs: LONG_BLOCK }));
    await addMany(q, 'j', 8);
    await waitUntil(() => gate.running === 1, 'one job running');
    w.concurrency = 3; // its one lane waits for a slot: it leases now
    expect(w.concurrency).toBe(3);
    await waitUntil(() => gate.running === 3, 'three jobs running at once after the raise', 2000);
    expect((await q.counts()).working).toBe(3);
    w.concurrency = 6; // a second lane from 4 on
    await waitUntil(() => gate.running === 6, 'six jobs running at once after the second raise', 2000);
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 8, 'all completed');
    expect(gate.most).toBe(6);
  });

  test('lowered: running handlers finish, then no more than the new value run', async () => {
    const q = res.queue('lower');
    let running = 0;
    let lowered = false;
    let reached = false;
    let over = 0;
    const gate = new Gate();
    const w = res.worker(
      new Worker(
        q,
        async () => {
          running += 1;
          if (reached && running > 2) over += 1;
          await gate.enter();
          running -= 1;
          if (lowered && running <= 2) reached = true;
        },
        { concurrency: 6, blockMs: LONG_BLOCK },
      ),
    );
    await addMany(q, 'j', 20);
    await waitUntil(() => running === 6, 'six running');
    w.concurrency = 2;
    lowered = true;
    expect(w.inFlight).toBe(6); // never aborted
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 20, 'all completed');
    expect(reached).toBe(true);
    expect(over).toBe(0);
  });

  test('a bad value throws ValidationError and changes nothing (Worker and BatchWorker)', async () => {
    const q = res.queue('bad');
    const w = res.worker(new Worker(q, () => undefined, { concurrency: 3, autostart: false }));
    for (const bad of [0, -1, 1.5, 1001, Number.NaN, '4' as unknown as number]) {
      expect(() => (w.concurrency = bad)).toThrow(ValidationError);
      expect(w.concurrency).toBe(3);
    }
    const b = res.worker(new BatchWorker(q, () => undefined, { size: 2, concurrency: 2, autostart: false }));
    expect(() => (b.concurrency = 65)).toThrow(ValidationError); // batches have their own limit
    expect(b.concurrency).toBe(2);
    b.concurrency = 64;
    expect(b.concurrency).toBe(64);
  });

  test('BatchWorker raised: the new lanes lease batches at once; lowered: at most the new number of batches', async () => {
    const q = res.queue('batch-conc');
    const gate = new Gate();
    let held = 0;
    let reached = false;
    let over = 0;
    let lowered = false;
    const w = res.worker(
      new BatchWorker(
        q,
        async (jobs) => {
          held += 1;
          if (reached && held > 1) over += 1;
          await gate.enter(jobs.length);
          held -= 1;
          if (lowered && held <= 1) reached = true;
        },
        { size: 2, concurrency: 1, blockMs: LONG_BLOCK, autostart: false },
      ),
    );
    await addMany(q, 'j', 16);
    w.start();
    await waitUntil(() => held === 1, 'one batch running');
    w.concurrency = 3;
    await waitUntil(() => held === 3 && w.batchesHeld === 3, 'three batches at once after the raise', 2000);
    expect((await q.counts()).working).toBe(6);
    w.concurrency = 1;
    lowered = true;
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 16, 'all completed');
    expect(reached).toBe(true);
    expect(over).toBe(0);
  });
});

describe('worker.pause() / resume()', () => {
  test('an idle worker pauses at once; another worker of the queue takes every job meanwhile; resume leases again at once', async () => {
    const q = res.queue('idle');
    const twin = res.twin(q);
    const byA: string[] = [];
    const byB: string[] = [];
    const a = res.worker(new Worker(q, (job) => void byA.push(job.id), { concurrency: 2, blockMs: LONG_BLOCK }));
    const b = res.worker(new Worker(twin, (job) => void byB.push(job.id), { concurrency: 1, blockMs: LONG_BLOCK }));
    const obs = res.client();
    await waitUntil(async () => (await blockedClients(obs)) === 2, 'both waiting on Redis');
    // a waits on Redis: pause() cuts that wait short
    await within(a.pause(), 2000, 'pause() of an idle worker');
    expect(a.isPaused).toBe(true);
    expect(a.isRunning).toBe(true);
    await addMany(q, 'p', 10);
    await waitUntil(async () => (await q.counts()).completed === 10, 'the other worker ran every job');
    expect(byA).toEqual([]);
    expect(byB).toHaveLength(10);

    await b.pause();
    await addMany(q, 'r', 4);
    a.resume();
    expect(a.isPaused).toBe(false);
    await waitUntil(() => byA.length === 4, 'the resumed worker ran the new jobs', 2000);
  });

  test('a busy worker: running jobs finish and settle, no new lease while jobs are pending; their leases are kept alive past leaseMs', async () => {
    const q = res.queue('busy');
    const obs = res.client();
    const leaseMs = 600;
    const gate = new Gate();
    const started: string[] = [];
    const deadlines: number[] = [];
    const w = res.worker(
      new Worker(
        q,
        async (job: Job) => {
          started.push(job.id);
          deadlines.push(job.deadline);
          await gate.enter();
        },
        { concurrency: 2, leaseMs, blockMs: LONG_BLOCK },
      ),
    );
    const events: string[] = [];
    w.events.subscribe((e) => events.push(e.type));
    const active: string[] = [];
    w.activity.subscribe((e) => e.type === 'active' && active.push(e.job.id));
    await addMany(q, 'j', 6);
    await waitUntil(() => gate.running === 2, 'two running');
    await w.pause();
    const startedAtPause = started.length;
    expect(startedAtPause).toBe(2);
    expect(await q.counts()).toMatchObject({ working: 2, pending: 4 });
    // the first leases run out on the Redis clock; the heartbeat kept them
    await untilRedisTime(obs, Math.max(...deadlines) + leaseMs);
    expect((await q.sweep()).stalled).toBe(0);
    expect(await q.counts()).toMatchObject({ working: 2, pending: 4 });
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 2, 'the running jobs settled while paused');
    expect(events.filter((t) => t === 'completed')).toHaveLength(2);
    expect(events).not.toContain('lost');
    expect(await q.counts()).toMatchObject({ working: 0, pending: 4 });
    expect(started).toHaveLength(startedAtPause);
    expect(active).toHaveLength(startedAtPause);

    w.resume();
    await waitUntil(() => started.length > startedAtPause, 'leases again after resume', 2000);
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 6, 'all completed');
  });

  test('pause({ drain: true }) resolves once the running handlers finished and their outcomes settled', async () => {
    const q = res.queue('drain');
    const gate = new Gate();
    const w = res.worker(new Worker(q, () => gate.enter(), { concurrency: 3, blockMs: LONG_BLOCK }));
    const completed: string[] = [];
    w.events.subscribe((e) => e.type === 'completed' && completed.push(e.job.id));
    await addMany(q, 'j', 5);
    await waitUntil(() => gate.running === 3, 'three running');
    let drained = false;
    const pausing = w.pause({ drain: true }).then(() => (drained = true));
    await w.pause(); // the plain pause resolves while handlers run
    expect(drained).toBe(false);
    gate.release();
    await within(pausing, 2000, 'pause({ drain: true })');
    expect(completed).toHaveLength(3);
    expect(w.inFlight).toBe(0);
    expect(await q.counts()).toMatchObject({ working: 0, pending: 2, completed: 3 });
    expect(() => w.pause({ drain: 1 as unknown as boolean })).toThrow(ValidationError);
    expect(() => w.pause({ wait: true } as never)).toThrow(ValidationError);
  });

  test('close() while paused ends the worker and resolves a pending pause', async () => {
    const q = res.queue('close');
    const gate = new Gate();
    const w = res.worker(new Worker(q, () => gate.enter(), { concurrency: 1, blockMs: LONG_BLOCK }));
    await q.add({}, { jobId: 'a' });
    await waitUntil(() => gate.running === 1, 'running');
    const pausing = w.pause({ drain: true });
    await within(w.close({ drainTimeoutMs: 0 }), 2000, 'close while paused');
    await within(pausing, 1000, 'the pending pause');
    expect((await q.counts()).pending).toBe(1); // given back at close
  });

  test('BatchWorker: pause resolves while batches run; they finish and settle; no new batch until resume', async () => {
    const q = res.queue('batch-pause');
    const twin = res.twin(q);
    const gate = new Gate();
    const batches: string[][] = [];
    const w = res.worker(
      new BatchWorker(
        q,
        async (jobs) => {
          batches.push(jobs.map((j) => j.id));
          await gate.enter(jobs.length);
        },
        { size: 2, concurrency: 2, blockMs: LONG_BLOCK, autostart: false },
      ),
    );
    await addMany(q, 'j', 8);
    w.start();
    await waitUntil(() => gate.running === 4, 'two batches running');
    await within(w.pause(), 2000, 'pause() with batches running');
    expect(await q.counts()).toMatchObject({ working: 4, pending: 4 });
    gate.release();
    await waitUntil(async () => (await q.counts()).completed === 4, 'the running batches settled while paused');
    // another worker of the queue takes what is left; the paused one leases nothing
    const other: string[] = [];
    res.worker(new Worker(twin, (job) => void other.push(job.id), { blockMs: LONG_BLOCK }));
    await waitUntil(async () => (await q.counts()).completed === 8, 'the other worker ran the rest');
    expect(batches).toHaveLength(2);
    expect(other).toHaveLength(4);

    await addMany(q, 'r', 2);
    await waitUntil(async () => (await q.counts()).completed === 10, 'the other worker ran the new jobs too');
    expect(batches).toHaveLength(2);
    w.resume();
    await addMany(q, 's', 40);
    await waitUntil(() => batches.length > 2, 'a batch after resume', 2000);
  });

  test('pause() before start: the worker starts paused', async () => {
    const q = res.queue('before');
    const ran: string[] = [];
    const w = res.worker(new Worker(q, (job) => void ran.push(job.id), { autostart: false, blockMs: LONG_BLOCK }));
    await within(w.pause(), 1000, 'pause() before start');
    w.start();
    await q.add({}, { jobId: 'a' });
    const twin = res.twin(q);
    const other: string[] = [];
    res.worker(new Worker(twin, (job) => void other.push(job.id), { blockMs: LONG_BLOCK }));
    await waitUntil(() => other.length === 1, 'the other worker ran it');
    expect(ran).toEqual([]);
    w.resume();
    await q.add({}, { jobId: 'b' });
    await waitUntil(() => ran.length + other.length === 2, 'b ran');
  });
});
