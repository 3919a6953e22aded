/**
 * The behaviour of a queue as its producers and workers see it, through the public API only:
 * add, Worker, BatchWorker, retries and dead letters, delays, ids and deduplication, cancel,
 * remove, progress and logs, timeouts, fair groups and a group's order, pause, drain, events,
 * a graceful close, retention. Written against the calls a Queue and a PartitionedQueue share,
 * so one spec runs it over both (test/partitions/behaviour.spec.ts): what holds for a queue
 * holds for the logical queue made of partitions.
 */
import { BatchWorker, PartitionedQueue, Queue, Worker, type Job, type QueueEvent, type QueueOptions } from '../../lib/index.js';
import { sleep, waitUntil } from './wait.js';

/** The calls this suite makes: those of a Queue and a PartitionedQueue alike. */
export type LogicalQueue<D, R = unknown> = Queue<D, R> | PartitionedQueue<D, R>;

/** Opens a fresh, empty queue named `name` (the spec closes and deletes nothing: see `closers`). */
export type OpenQueue = <D, R = unknown>(name: string, opts?: Omit<QueueOptions, 'connection' | 'prefix'>) => LogicalQueue<D, R>;

export function describeLogicalBehaviour(title: string, open: () => OpenQueue): void {
  describe(`behaviour of a queue: ${title}`, () => {
    const closers: Array<() => Promise<unknown>> = [];
    let n = 0;
    afterEach(async () => {
      for (const close of closers.splice(0)) await close().catch(() => undefined);
    });

    function queue<D, R = unknown>(opts: Omit<QueueOptions, 'connection' | 'prefix'> = {}): LogicalQueue<D, R> {
      const q = open()<D, R>(`lb-${++n}-${Date.now().toString(36)}`, opts);
      closers.push(() => q.close());
      return q;
    }

    /** Starts a worker, closed before its queue (closers run in order: this one goes first). */
    function run<W extends { start(): void; close(o?: { drainTimeoutMs?: number }): Promise<void> }>(w: W): W {
      w.start();
      closers.unshift(() => w.close({ drainTimeoutMs: 0 }));
      return w;
    }

    test('every job runs once; its result, getJob, waitForResult and counts read the end', async () => {
      const q = queue<{ n: number }, number>();
      const ran = new Map<string, number>();
      const one = await q.add({ n: 0 });
      const rest = await q.addBulk(Array.from({ length: 59 }, (_, i) => ({ data: { n: i + 1 } })));
      const ids = [one.id, ...rest.map((r) => r.id)];
      expect(new Set(ids).size).toBe(60);
      run(new Worker(q, (job: Job<{ n: number }>) => {
        ran.set(job.id, (ran.get(job.id) ?? 0) + 1);
        return job.data.n * 2;
      }, { concurrency: 4 }));
      expect(await q.waitForResult(ids[59]!, { timeoutMs: 20_000 })).toBe(118);
      await waitUntil(async () => (await q.counts()).completed === 60, 'every job completed', 20_000);
      expect([...ran.values()].every((c) => c === 1)).toBe(true);
      expect(ran.size).toBe(60);
      expect(await q.getJob(ids[7]!)).toMatchObject({ state: 'completed', result: 14, data: { n: 7 }, failures: 0 });
      expect(await q.counts()).toMatchObject({ pending: 0, working: 0, delayed: 0, dead: 0 });
    });

    test('a failing job is retried after its backoff, dead-lettered when its attempts run out, and redriven by retryDead', async () => {
      const q = queue<string, string>();
      let failing = true;
      const attempts: number[] = [];
      run(new Worker(q, (job: Job<string>) => {
        attempts.push(job.attempt);
        if (failing) throw new Error(`no ${job.data}`);
        return 'ok';
      }));
      const { id } = await q.add('x', { attempts: 3, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } });
      await waitUntil(async () => (await q.getJob(id))?.state === 'dead', 'the job to be dead-lettered', 15_000);
      expect(attempts).toEqual([1, 2, 3]);
      const dead = await q.getJob(id);
      expect(dead).toMatchObject({ failures: 3, lastError: 'Error: no x' });
      expect(dead!.errors!.map((e) => e.attempt)).toEqual([1, 2, 3]);
      expect((await q.listDead()).map((d) => d.id)).toEqual([id]);
      failing = false;
      expect(await q.retryDead([id])).toEqual([id]);
      expect(await q.waitForResult(id, { timeoutMs: 15_000 })).toBe('ok');
      expect(await q.listDead()).toEqual([]);
      expect(await q.counts()).toMatchObject({ completed: 1, dead: 0 });
    });

    test('a delayed job runs no earlier than its due time; promote runs one at once', async () => {
      const q = queue<string>();
      const ranAt = new Map<string, number>();
      run(new Worker(q, (job: Job<string>) => void ranAt.set(job.data, Date.now())));
      const addedAt = Date.now();
      const soon = await q.add('soon', { delayMs: 600 });
      const late = await q.add('late', { delayMs: 120_000 });
      expect((await q.getJob(soon.id))?.state).toBe('delayed');
      await waitUntil(() => ranAt.has('soon'), 'the delayed job to run', 15_000);
      // Redis time decides; this process's clock may lag it by a few ms
      expect(ranAt.get('soon')! - addedAt).toBeGreaterThanOrEqual(550);
      expect(ranAt.has('late')).toBe(false);
      expect(await q.promote(late.id)).toBe(true);
      await waitUntil(() => ranAt.has('late'), 'the promoted job to run', 15_000);
      expect(await q.counts()).toMatchObject({ delayed: 0, completed: 2 });
    });

    test('a jobId is added once; a deduplication id makes one job while that job lives', async () => {
      const q = queue<number>();
      const a = await q.add(1, { jobId: 'order-1' });
      const again = await q.add(2, { jobId: 'order-1' });
      expect([a.created, again.created, again.id]).toEqual([true, false, 'order-1']);
      const d1 = await q.add(3, { deduplication: { id: 'user-9' } });
      const d2 = await q.add(4, { deduplication: { id: 'user-9' } });
      expect(d1.created).toBe(true);
      expect(d2).toMatchObject({ created: false, id: d1.id });
      expect(await q.getDeduplicationJobId('user-9')).toBe(d1.id);
      expect((await q.counts()).pending).toBe(2);
      expect((await q.getJob('order-1'))?.data).toBe(1);
    });

    test("cancel aborts a running job's signal and dead-letters it; a removed job never runs", async () => {
      const q = queue<string>();
      const started = new Set<string>();
      const reasons = new Map<string, unknown>();
      run(new Worker(q, async (job: Job<string>) => {
        started.add(job.data);
        await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.set(job.data, job.signal.reason);
        throw job.signal.reason;
      }, { concurrency: 1 }));
      const first = await q.add('first');
      const second = await q.add('second');
      await waitUntil(() => started.size === 1, 'a job to start', 15_000);
      const runningId = started.has('first') ? first.id : second.id;
      const waitingId = runningId === first.id ? second.id : first.id;
      expect(await q.remove(waitingId)).toBe(true);
      expect(await q.cancel(runningId, { reason: 'not wanted' })).toBe('dead');
      await waitUntil(() => reasons.size === 1, "the running job's signal to abort", 15_000);
      expect(String(reasons.values().next().value)).toMatch(/not wanted/);
      expect(await q.getJob(runningId)).toMatchObject({ state: 'dead' });
      expect(await q.getJob(waitingId)).toBeNull();
      await sleep(300);
      expect(started.size).toBe(1);
    });

    test('progress and log lines a handler writes are read back with the job', async () => {
      const q = queue<string>();
      run(new Worker(q, async (job: Job<string>) => {
        await job.updateProgress({ step: 1 });
        await job.log('first step');
        await job.updateProgress(100);
        await job.log('done');
      }));
      const { id } = await q.add('x');
      await q.waitForResult(id, { timeoutMs: 15_000 });
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', progress: 100, logs: ['first step', 'done'] });
    });

    test("an attempt past its timeoutMs aborts its handler's signal and counts a failure", async () => {
      const q = queue<string>();
      let aborted = 0;
      run(new Worker(q, async (job: Job<string>) => {
        if (job.attempt > 1) return;
        await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted += 1;
        throw job.signal.reason;
      }));
      const { id } = await q.add('slow', { timeoutMs: 200, attempts: 2, backoff: 0 });
      await waitUntil(async () => (await q.getJob(id))?.state === 'completed', 'the second attempt to complete', 15_000);
      expect(aborted).toBe(1);
      expect(await q.getJob(id)).toMatchObject({ failures: 1 });
    });

    test("fair groups: a small group's jobs are not kept waiting behind a large group's", async () => {
      const q = queue<string>();
      await q.addBulk(Array.from({ length: 40 }, () => ({ data: 'big', opts: { group: 'big' } })));
      await q.addBulk(Array.from({ length: 4 }, () => ({ data: 'small', opts: { group: 'small' } })));
      const order: string[] = [];
      run(new Worker(q, (job: Job<string>) => void order.push(job.data), { concurrency: 1 }));
      await waitUntil(() => order.length === 44, 'every job to run', 20_000);
      // turns between the groups: the small group's four run within the first few turns, not after forty
      expect(order.lastIndexOf('small')).toBeLessThan(16);
    });

    test("a group's jobs run one at a time in the order added, over several workers", async () => {
      const q = queue<{ g: number; k: number }>({ groupConcurrency: 1 });
      const order = new Map<number, number[]>();
      let running = 0;
      let overlap = false;
      const busy = new Set<number>();
      const handler = async (job: Job<{ g: number; k: number }>) => {
        if (busy.has(job.data.g)) overlap = true;
        busy.add(job.data.g);
        running += 1;
        await sleep(2);
        order.set(job.data.g, [...(order.get(job.data.g) ?? []), job.data.k]);
        busy.delete(job.data.g);
        running -= 1;
      };
      for (let w = 0; w < 3; w++) run(new Worker(q, handler, { concurrency: 4 }));
      for (let k = 0; k < 15; k++) await q.addBulk(Array.from({ length: 6 }, (_, g) => ({ data: { g, k }, opts: { group: `g${g}` } })));
      await waitUntil(() => [...order.values()].reduce((a, o) => a + o.length, 0) === 90, 'every job to run', 30_000);
      expect(overlap).toBe(false);
      for (const o of order.values()) expect(o).toEqual(Array.from({ length: 15 }, (_, k) => k));
      expect(running).toBe(0);
    });

    test('pause holds every job back until resume; drain removes what waits', async () => {
      const q = queue<number>();
      const ran: number[] = [];
      run(new Worker(q, (job: Job<number>) => void ran.push(job.data), { concurrency: 2 }));
      await q.pause();
      expect(await q.isPaused()).toBe(true);
      await q.addBulk(Array.from({ length: 12 }, (_, i) => ({ data: i })));
      await sleep(500);
      expect(ran).toEqual([]);
      await q.resume();
      await waitUntil(() => ran.length === 12, 'the jobs to run after resume', 15_000);
      await q.pause();
      await q.addBulk(Array.from({ length: 7 }, (_, i) => ({ data: 100 + i })));
      expect(await q.drain()).toBe(7);
      expect(await q.counts()).toMatchObject({ pending: 0, completed: 12 });
    });

    test("events: the logical queue's added, completed, retried and dead", async () => {
      const q = queue<string>();
      const seen: QueueEvent[] = [];
      const sub = q.events().subscribe((e) => seen.push(e));
      closers.push(async () => sub.unsubscribe());
      await q.eventsReady();
      run(new Worker(q, (job: Job<string>) => {
        if (job.data === 'bad') throw new Error('bad');
      }));
      const good = await q.add('good');
      const bad = await q.add('bad', { attempts: 2, backoff: 0 });
      await waitUntil(() => seen.some((e) => e.type === 'dead' && e.id === bad.id), 'the dead event', 10_000);
      await waitUntil(() => seen.some((e) => e.type === 'completed' && e.id === good.id), 'the completed event', 10_000);
      const of = (id: string) => seen.filter((e) => e.id === id).map((e) => e.type);
      expect(of(good.id)).toEqual(expect.arrayContaining(['added', 'completed']));
      expect(of(bad.id)).toEqual(expect.arrayContaining(['added', 'retried', 'dead']));
      expect(seen.every((e) => e.queue === q.name)).toBe(true);
    });

    test('a BatchWorker settles whole batches: each job once, failures retried on their own', async () => {
      const q = queue<number, number>();
      const seen = new Map<number, number>();
      const ids = (await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ data: i, opts: { attempts: 2, backoff: 0 } })))).map((r) => r.id);
      run(new BatchWorker(q, (jobs: Array<Job<number>>) => jobs.map((j) => {
        seen.set(j.data, (seen.get(j.data) ?? 0) + 1);
        // 7 fails its first attempt: only it is run again
        return j.data === 7 && j.attempt === 1 ? { ok: false as const, error: 'seven' } : { ok: true as const, result: j.data + 1 };
      }), { size: 8 }));
      await waitUntil(async () => (await q.counts()).completed === 30, 'every job completed', 20_000);
      expect(seen.get(7)).toBe(2);
      expect([...seen.entries()].filter(([k]) => k !== 7).every(([, c]) => c === 1)).toBe(true);
      expect(await q.getJob(ids[7]!)).toMatchObject({ result: 8, failures: 1 });
    });

    test('close waits for running jobs; jobs given back at close run on another worker', async () => {
      const q = queue<number>();
      const done: number[] = [];
      const gate = { open: false };
      const first = new Worker(q, async (job: Job<number>) => {
        await waitUntil(() => gate.open || job.signal.aborted, 'the gate', 15_000);
        if (job.signal.aborted) throw job.signal.reason;
        done.push(job.data);
      }, { concurrency: 3 });
      first.start();
      await q.addBulk(Array.from({ length: 3 }, (_, i) => ({ data: i })));
      await waitUntil(() => first.inFlight === 3, 'three jobs to start', 15_000);
      const closing = first.close({ drainTimeoutMs: 10_000 });
      await sleep(100);
      gate.open = true;
      await closing;
      expect(done.sort()).toEqual([0, 1, 2]);
      // now give back: a worker closed at once hands its running jobs to the next
      gate.open = false;
      const second = new Worker(q, async (job: Job<number>) => {
        await waitUntil(() => job.signal.aborted, 'the give-back', 15_000);
        throw job.signal.reason;
      }, { concurrency: 2 });
      second.start();
      await q.addBulk([{ data: 10 }, { data: 11 }]);
      await waitUntil(() => second.inFlight === 2, 'two jobs to start', 15_000);
      await second.close({ drainTimeoutMs: 0 });
      expect(await q.counts()).toMatchObject({ pending: 2, working: 0 });
      gate.open = true;
      run(new Worker(q, (job: Job<number>) => void done.push(job.data)));
      await waitUntil(() => done.length === 5, 'the given-back jobs to run', 15_000);
      expect(await q.counts()).toMatchObject({ completed: 5, dead: 0 });
    });

    test('retention by count keeps no more completed jobs than asked, the newest', async () => {
      const q = queue<number>({ defaults: { keepCompleted: { count: 8 } } });
      const ids = (await q.addBulk(Array.from({ length: 40 }, (_, i) => ({ data: i })))).map((r) => r.id);
      const ran: string[] = [];
      run(new Worker(q, (job: Job<number>) => void ran.push(job.id), { concurrency: 1 }));
      await waitUntil(() => ran.length === 40, 'every job to run', 20_000);
      await waitUntil(async () => (await q.counts()).completed <= 8, 'retention to apply', 10_000);
      const kept = (await q.getJobs('completed', { end: 99 })).map((j) => j.id);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThanOrEqual(8);
      // none of the first half ran late enough to be among the newest kept
      expect(kept.every((id) => ran.indexOf(id) >= 20)).toBe(true);
      expect(ids).toHaveLength(40);
    });
  });
}
