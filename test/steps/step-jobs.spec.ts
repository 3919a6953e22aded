/**
 * Step jobs: a handler saves its progress in the job's data (job.updateData) and continues
 * later with job.moveToDelayed(runAt) / job.snooze(ms): the lease ends, the job waits in the
 * delayed set without a failed attempt, and the worker drops whatever the handler then
 * returns or throws. The lease API has the same calls (queue.moveToDelayed / snooze).
 */
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { BatchWorker, ValidationError, Worker, type Job, type WorkerEvent } from '../../lib/index.js';
import { commandStats, redisNow, scriptCalls, sleep, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';

const res = useRedis();

interface Steps {
  step: number;
  done?: string[];
}

/** Records a worker's events: its jobs' (not the loop's 'drained', test/core/drained.spec.ts). */
function recorded<D, R>(w: Worker<D, R> | BatchWorker<D, R>): Array<WorkerEvent<D, R>> {
  const seen: Array<WorkerEvent<D, R>> = [];
  w.events.subscribe((e) => e.type !== 'drained' && seen.push(e));
  return seen;
}

describe('Worker', () => {
  test('a job of three steps: each saved in its data, continued after a snooze, no attempt used', async () => {
    const q = res.queue<Steps, string>();
    const calls: Array<{ step: number; attempt: number }> = [];
    const w = res.worker(
      new Worker(q, async (job: Job<Steps>) => {
        calls.push({ step: job.data.step, attempt: job.attempt });
        if (job.data.step < 3) {
          const done = [...(job.data.done ?? []), `step ${job.data.step}`];
          expect(await job.updateData({ step: job.data.step + 1, done })).toBe(true);
          expect(job.data).toEqual({ step: job.data.step, done }); // the view follows
          expect(await job.snooze(30)).toBe(true);
          return 'dropped'; // the attempt is over: not acked
        }
        return job.data.done!.join(', ');
      }),
    );
    const events = recorded(w);
    const { id } = await q.add({ step: 1 }, { attempts: 1 });
    expect(await q.waitForResult(id, { timeoutMs: 5000 })).toBe('step 1, step 2');
    expect(calls).toEqual([
      { step: 1, attempt: 1 },
      { step: 2, attempt: 1 },
      { step: 3, attempt: 1 },
    ]);
    // each step counted as a requeue (put back without a failure), so that dequeues counts the leases
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', failures: 0, requeues: 2, dequeues: 3, data: { step: 3 } });
    expect(events.map((e) => e.type)).toEqual(['completed']);
    expect(w.inFlight).toBe(0);
  });

  test('moveToDelayed(runAt): delayed until then (Redis clock), its slot free once the handler returns, a throw after it dropped', async () => {
    const q = res.queue<Steps, string>();
    const obs = res.client();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runAt = 0;
    const w = res.worker(
      new Worker(
        q,
        async (job: Job<Steps>) => {
          if (job.data.step === 1) {
            runAt = (await redisNow(obs)) + 60_000;
            expect(await job.moveToDelayed(new Date(runAt))).toBe(true);
            expect(await job.moveToDelayed(runAt + 1)).toBe(false); // once
            await held;
            throw new Error('BullMQ style: DelayedError after moveToDelayed'); // dropped too
          }
          return 'other';
        },
        { concurrency: 1 },
      ),
    );
    const events = recorded(w);
    const { id } = await q.add({ step: 1 });
    await waitUntil(async () => (await q.getJob(id))?.state === 'delayed', 'the job delayed by its handler');
    expect((await q.getJob(id))!.runAt).toBe(runAt);
    expect(await whereIs(obs, q, id)).toEqual(['jobs', 'delayed']);
    await booksAgree(obs, q);
    // the handler still runs: its slot is still taken (concurrency 1)
    const { id: next } = await q.add({ step: 2 });
    expect(w.inFlight).toBe(1);
    expect((await q.getJob(next))!.state).toBe('pending');
    release();
    expect(await q.waitForResult(next, { timeoutMs: 5000 })).toBe('other');
    expect(await q.getJob(id)).toMatchObject({ state: 'delayed', failures: 0, runAt });
    expect(events.map((e) => e.type)).toEqual(['completed']);
  });

  test('a moved lease is neither heartbeated nor reported lost while its handler runs on', async () => {
    const q = res.queue<Steps, string>();
    const obs = res.client();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const w = res.worker(
      new Worker(
        q,
        async (job: Job<Steps>) => {
          await job.snooze(60_000);
          await held;
          expect(job.signal.aborted).toBe(false);
          expect(await job.touch()).toBe(false); // no longer its lease
          expect(await job.updateData({ step: 9 })).toBe(false);
          expect(await job.updateProgress(50)).toBe(false);
          return 'dropped';
        },
        { leaseMs: 100 }, // heartbeats every 25 ms
      ),
    );
    const events = recorded(w);
    const { id } = await q.add({ step: 1 });
    await waitUntil(async () => (await q.getJob(id))?.state === 'delayed', 'the job delayed');
    // its one slot is taken while the handler runs: the worker sends nothing but touches
    const before = await commandStats(obs);
    await sleep(300); // a dozen heartbeat ticks
    expect(scriptCalls(statsDelta(before, await commandStats(obs)))).toBe(0); // no touch sent for it
    release();
    await waitUntil(() => w.inFlight === 0, 'the handler returned');
    expect(events).toEqual([]);
    expect(await q.getJob(id)).toMatchObject({ state: 'delayed', failures: 0, data: { step: 1 } });
  });

  test("watch(id) and the queue's events see the job delayed, then leased again", async () => {
    const q = res.queue<Steps, string>();
    const w = res.worker(
      new Worker(q, async (job: Job<Steps>) => {
        if (job.data.step === 1) {
          await job.updateData({ step: 2 });
          await job.snooze(50);
          return undefined;
        }
        return 'two';
      }),
    );
    const { id } = await q.add({ step: 1 }, { delayMs: 300 });
    const states = firstValueFrom(q.watch(id).pipe(toArray()));
    const delayed = firstValueFrom(q.events().pipe(filter((e) => e.type === 'delayed' && e.id === id), take(1)));
    expect(await q.waitForResult(id, { timeoutMs: 5000 })).toBe('two');
    expect((await delayed).runAt).toEqual(expect.any(Number));
    expect(await states).toEqual(['delayed', 'pending', 'working', 'delayed', 'pending', 'working', 'completed']);
    expect(w.isRunning).toBe(true);
  });

  test('a grouped job moved to the delayed set gives its group slot back', async () => {
    const q = res.queue<Steps, string>('grp', { groupConcurrency: 1 });
    const order: string[] = [];
    res.worker(
      new Worker(
        q,
        async (job: Job<Steps>) => {
          order.push(`${job.id}:${job.data.step}`);
          if (job.id === 'a' && job.data.step === 1) {
            await job.updateData({ step: 2 });
            await job.snooze(300);
          }
          return job.id;
        },
        { concurrency: 2 },
      ),
    );
    await q.add({ step: 1 }, { jobId: 'a', group: 'g' });
    await q.add({ step: 1 }, { jobId: 'b', group: 'g' });
    await q.waitForResult('b', { timeoutMs: 5000 });
    expect(await q.waitForResult('a', { timeoutMs: 5000 })).toBe('a');
    expect(order).toEqual(['a:1', 'b:1', 'a:2']);
  });

  test('the loop leases on after it woke while a grouped job\'s settle was leasing (ten rounds)', async () => {
    // The settle of a grouped job (b) leases in the same call; the loop, woken meanwhile by a
    // token left over from a's snooze, found every slot reserved by that call and waited for
    // a slot that no handler would free: a stayed delayed (two rounds in three, before the fix).
    for (let round = 0; round < 10; round++) {
      const q = res.queue<Steps, string>(`woke${round}`, { groupConcurrency: 1 });
      await q.add({ step: 1 }, { jobId: 'a', group: 'g' });
      await q.add({ step: 1 }, { jobId: 'b', group: 'g' });
      let snoozed = false;
      const w = new Worker(
        q,
        async (job: Job<Steps>) => {
          if (job.id === 'a' && !snoozed) {
            snoozed = true;
            await job.snooze(50);
          }
          return job.id;
        },
        { concurrency: 2 },
      );
      try {
        expect(await q.waitForResult('a', { timeoutMs: 3000 })).toBe('a');
      } finally {
        await w.close();
      }
    }
  });

  test('a bad time is refused before anything changes; the attempt goes on', async () => {
    const q = res.queue<Steps, string>();
    const w = res.worker(
      new Worker(q, async (job: Job<Steps>) => {
        await expect(job.snooze(-1)).rejects.toThrow(ValidationError);
        await expect(job.moveToDelayed(Number.NaN)).rejects.toThrow(ValidationError);
        await expect(job.moveToDelayed('soon' as never)).rejects.toThrow(ValidationError);
        await expect(job.updateData({ step: 1n } as never)).rejects.toThrow(ValidationError);
        return 'completed anyway';
      }),
    );
    const { id } = await q.add({ step: 1 });
    expect(await q.waitForResult(id, { timeoutMs: 5000 })).toBe('completed anyway');
    expect(w.inFlight).toBe(0);
  });
});

describe('BatchWorker', () => {
  test('a job of a batch moved by the handler is not settled; the others are', async () => {
    const q = res.queue<Steps, string>();
    const w = res.worker(
      new BatchWorker(
        q,
        async (jobs: Array<Job<Steps>>) => {
          for (const job of jobs) {
            if (job.id === 'b' && job.data.step === 1) {
              await job.updateData({ step: 2 });
              expect(await job.snooze(60_000)).toBe(true);
            }
          }
          return jobs.map((j) => ({ ok: true as const, result: `${j.id}:${j.data.step}` }));
        },
        { size: 3, waitMs: 200 },
      ),
    );
    const events = recorded(w);
    await q.addBulk(['a', 'b', 'c'].map((id) => ({ data: { step: 1 }, opts: { jobId: id } })));
    await waitUntil(async () => (await q.counts()).completed === 2, 'a and c completed');
    expect(await q.getJob('b')).toMatchObject({ state: 'delayed', failures: 0, data: { step: 2 } });
    expect(events.map((e) => e.type === 'completed' && e.job.id).sort()).toEqual(['a', 'c']);
    expect(await q.promote('b')).toBe(true);
    expect(await q.waitForResult('b', { timeoutMs: 5000 })).toBe('b:2');
  });
});

describe('lease API', () => {
  test('queue.moveToDelayed / snooze end the lease without a failed attempt; a stale lease changes nothing', async () => {
    const q = res.queue<Steps, string>();
    const obs = res.client();
    await q.add({ step: 1 }, { jobId: 'j', attempts: 1 });
    const [lease] = await q.lease();
    expect(await q.updateData(lease!, { step: 2 })).toBe(true);
    const t0 = await redisNow(obs);
    expect(await q.snooze(lease!, 60_000)).toBe(true);
    const due = Number(await obs.zscore(q.keys.byName.delayed, 'j'));
    expect(due).toBeGreaterThanOrEqual(t0 + 60_000);
    expect(due).toBeLessThanOrEqual((await redisNow(obs)) + 60_000);
    expect(await whereIs(obs, q, 'j')).toEqual(['jobs', 'delayed']);
    // the lease ended there
    for (const late of [q.snooze(lease!, 1), q.moveToDelayed(lease!, 0), q.ack(lease!, 'late'), q.nack(lease!), q.touch(lease!, 1000)]) {
      expect(await late).toBe(false);
    }
    expect(Number(await obs.zscore(q.keys.byName.delayed, 'j'))).toBe(due);

    // a past runAt is due at once; the next lease has the saved data and the same attempt
    expect(await q.promote('j')).toBe(true);
    const [again] = await q.lease();
    expect(again!.job).toMatchObject({ id: 'j', data: { step: 2 }, attempt: 1, requeues: 1 });
    expect(await q.moveToDelayed(again!, 0)).toBe(true);
    const [third] = await q.lease();
    expect(third!.job).toMatchObject({ id: 'j', attempt: 1, requeues: 2 });
    expect(await q.ack(third!, 'done')).toBe(true);
    expect(await q.getJob('j')).toMatchObject({ state: 'completed', failures: 0, dequeues: 3, result: 'done' });
  });

  test('a bounded queue counts a moved job as unfinished', async () => {
    const q = res.queue<Steps, string>('bounded', { bound: 1 });
    await q.add({ step: 1 }, { jobId: 'j' });
    const [lease] = await q.lease();
    expect(await q.snooze(lease!, 60_000)).toBe(true);
    await expect(q.tryAdd({ step: 1 })).rejects.toThrow(/full/);
  });
});
