/**
 * Backoff strategies registered on workers: a job whose backoff is `{ type: 'custom', strategy }`
 * waits, after a failed attempt, for the delay the worker's strategy chose (sent with the nack,
 * fenced by the lease token), or dies at once ('dead'). A strategy the worker lacks, or one that
 * fails, leaves the retry to the built-in backoff, with one warning.
 */
import type { Redis } from 'ioredis';
import { BatchWorker, ValidationError, Worker, type BackoffStrategy, type Queue, type RelqWarning, type WorkerEvent } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

const custom = (strategy: string) => ({ type: 'custom' as const, strategy });

/** A queue whose warnings are kept in `warnings`. */
function warnedQueue(): { q: Queue<string>; warnings: RelqWarning[] } {
  const warnings: RelqWarning[] = [];
  return { q: res.queue<string>('bq', { onWarning: (w) => warnings.push(w) }), warnings };
}

/** The worker's events, kept: its jobs' (not the loop's 'drained', test/core/drained.spec.ts). */
function eventsOf(w: Worker<string> | BatchWorker<string>): Array<WorkerEvent<string, unknown>> {
  const got: Array<WorkerEvent<string, unknown>> = [];
  w.events.subscribe((e) => e.type !== 'drained' && got.push(e));
  return got;
}

const failing = (): never => {
  throw new Error('upstream said no');
};

/** Waits until job `id` is in `state`; returns its view. */
async function until(q: Queue<string>, id: string, state: string) {
  await waitUntil(async () => (await q.getJob(id))?.state === state, `job ${id} ${state}`, 5000);
  return (await q.getJob(id))!;
}

/** The job is delayed by `ms` from a failure between Redis times `from` and `to`. */
function expectDelayed(runAt: number | undefined, from: number, to: number, ms: number, jitter = 0): void {
  expect(runAt).toBeGreaterThanOrEqual(from + Math.floor(ms * (1 - jitter)));
  expect(runAt).toBeLessThanOrEqual(to + Math.ceil(ms * (1 + jitter)));
}

describe('backoff strategies', () => {
  test("the worker's strategy chooses the delay, from the attempt, the error and the job", async () => {
    const { q, warnings } = warnedQueue();
    const obs: Redis = res.client();
    const calls: Array<[number, string, string, unknown]> = [];
    const byAttempt: BackoffStrategy<string> = (attempt, error, job) => {
      calls.push([attempt, (error as Error).message, job.id, job.policy.backoff]);
      return attempt === 1 ? 0 : 60_000;
    };
    await q.add('x', { jobId: 'j', attempts: 5, backoff: custom('byAttempt') });
    const from = await redisNow(obs);
    const w = res.worker(new Worker(q, failing, { backoffStrategies: { byAttempt } }));
    const info = await until(q, 'j', 'delayed');
    const to = await redisNow(obs);
    await w.close();
    // attempt 1: retried at once (0), attempt 2: after 60 s
    expect(calls).toEqual([
      [1, 'upstream said no', 'j', custom('byAttempt')],
      [2, 'upstream said no', 'j', custom('byAttempt')],
    ]);
    expect(info).toMatchObject({ failures: 2, lastError: 'Error: upstream said no' });
    expectDelayed(info.runAt, from, to, 60_000);
    expect(warnings).toEqual([]);
  });

  test("'dead' dead-letters the job at once, attempts left or not", async () => {
    const { q, warnings } = warnedQueue();
    await q.add('x', { jobId: 'j', attempts: 5, backoff: custom('never') });
    const w = res.worker(new Worker(q, failing, { backoffStrategies: { never: () => 'dead' } }));
    const got = eventsOf(w);
    const info = await until(q, 'j', 'dead');
    await waitUntil(() => got.some((e) => e.type === 'dead'), 'the dead event');
    expect(info).toMatchObject({ failures: 1, lastError: 'Error: upstream said no' });
    expect(got.map((e) => (e.type === 'failed' ? `failed willRetry=${e.willRetry}` : e.type))).toEqual(['failed willRetry=false', 'dead']);
    expect(warnings).toEqual([]);
  });

  test('a last attempt dies without asking the strategy', async () => {
    const { q } = warnedQueue();
    let asked = 0;
    await q.add('x', { jobId: 'j', attempts: 1, backoff: custom('count') });
    res.worker(new Worker(q, failing, { backoffStrategies: { count: () => (asked++, 0) } }));
    await until(q, 'j', 'dead');
    expect(asked).toBe(0);
  });

  test('a strategy the worker lacks: the built-in backoff, one warning per strategy', async () => {
    const { q, warnings } = warnedQueue();
    const obs = res.client();
    await q.add('a', { jobId: 'a', attempts: 3, backoff: custom('missing') });
    await q.add('b', { jobId: 'b', attempts: 3, backoff: custom('missing') });
    const from = await redisNow(obs);
    const w = res.worker(new Worker(q, failing, { concurrency: 2, backoffStrategies: { other: () => 0 } }));
    const [a, b] = [await until(q, 'a', 'delayed'), await until(q, 'b', 'delayed')];
    const to = await redisNow(obs);
    await w.close();
    // the built-in backoff: exponential from 1 s, jitter 0.2
    expectDelayed(a.runAt, from, to, 1000, 0.2);
    expectDelayed(b.runAt, from, to, 1000, 0.2);
    expect(warnings).toEqual([
      {
        code: 'RELQ_BACKOFF_STRATEGY',
        queue: 'bq',
        message: "queue 'bq': no backoff strategy 'missing' on this worker: its jobs retry with the built-in backoff (said once per worker and strategy)",
      },
    ]);
  });

  test('a strategy that throws or answers no delay: the built-in backoff, and a warning that says so', async () => {
    const { q, warnings } = warnedQueue();
    const obs = res.client();
    await q.add('a', { jobId: 'a', attempts: 3, backoff: custom('throws') });
    await q.add('b', { jobId: 'b', attempts: 3, backoff: custom('fraction') });
    const from = await redisNow(obs);
    const strategies = {
      throws: (): never => {
        throw new Error('bug in the strategy');
      },
      fraction: () => 1.5,
    };
    const w = res.worker(new Worker(q, failing, { concurrency: 2, backoffStrategies: strategies }));
    const [a, b] = [await until(q, 'a', 'delayed'), await until(q, 'b', 'delayed')];
    const to = await redisNow(obs);
    await w.close();
    expectDelayed(a.runAt, from, to, 1000, 0.2);
    expectDelayed(b.runAt, from, to, 1000, 0.2);
    expect(warnings.map((x) => x.message).sort()).toEqual([
      "queue 'bq': backoff strategy 'fraction' answered 1.5, not a delay in ms (0 to 2^41) or 'dead': its jobs retry with the built-in backoff (said once per worker and strategy)",
      "queue 'bq': backoff strategy 'throws' threw: Error: bug in the strategy: its jobs retry with the built-in backoff (said once per worker and strategy)",
    ]);
  });

  test('a BatchWorker applies its strategies to the failed jobs of a batch', async () => {
    const { q } = warnedQueue();
    const obs = res.client();
    await q.add('ok', { jobId: 'ok', backoff: custom('later') });
    await q.add('bad', { jobId: 'bad', attempts: 3, backoff: custom('later') });
    const from = await redisNow(obs);
    const handler = (jobs: Array<{ id: string }>) => jobs.map((j) => (j.id === 'bad' ? { ok: false as const, error: 'no' } : { ok: true as const }));
    res.worker(new BatchWorker(q, handler, { size: 2, waitMs: 50, backoffStrategies: { later: () => 30_000 } }));
    const bad = await until(q, 'bad', 'delayed');
    const to = await redisNow(obs);
    expect((await q.getJob('ok'))?.state).toBe('completed');
    expectDelayed(bad.runAt, from, to, 30_000);
  });

  test('a nack without a delay of a job with a strategy: the built-in backoff', async () => {
    const { q } = warnedQueue();
    const obs = res.client();
    await q.add('x', { jobId: 'j', attempts: 3, backoff: custom('any') });
    const [l] = await q.lease();
    expect(l!.job.policy.backoff).toEqual(custom('any'));
    const from = await redisNow(obs);
    expect(await q.nack(l!, { error: 'x' })).toBe(true);
    const to = await redisNow(obs);
    expectDelayed((await q.getJob('j'))!.runAt, from, to, 1000, 0.2);
  });

  test('a stale lease cannot nack with a delay: the job stays with its new lease', async () => {
    const { q } = warnedQueue();
    const obs = res.client();
    await q.add('x', { jobId: 'j', attempts: 3, backoff: custom('any') });
    const [old] = await q.lease({ leaseMs: 50 });
    await untilRedisTime(obs, old!.deadline, 'the first lease to run out');
    expect((await q.sweep()).stalled).toBe(1);
    const [current] = await q.lease();
    expect(current!.token).not.toBe(old!.token);
    const before = await q.getJob('j');
    expect(await q.nack(old!, { error: 'late', delayMs: 60_000 })).toBe(false);
    expect(await q.getJob('j')).toEqual(before);
    expect(before).toMatchObject({ state: 'working', failures: 1, lastError: 'lease expired' });
    expect(await q.nack(current!, { error: 'now', delayMs: 60_000 })).toBe(true);
    expect(await q.getJob('j')).toMatchObject({ state: 'delayed', failures: 2, lastError: 'now' });
  });

  test("a worker whose lease was lost cannot retry the job with its strategy's delay: reported lost, nothing written", async () => {
    const { q } = warnedQueue();
    const obs = res.client();
    const other = res.twin<string>(q);
    await q.add('x', { jobId: 'j', attempts: 3, backoff: custom('later') });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const handler = async (): Promise<never> => {
      await gate;
      throw new Error('late failure');
    };
    // its one slot stays busy: the job, back in pending, is leased by `other` alone
    const w = res.worker(new Worker(q, handler, { leaseMs: 100, heartbeat: false, backoffStrategies: { later: () => (asked++, 60_000) } }));
    const got = eventsOf(w);
    const held = await until(q, 'j', 'working');
    await untilRedisTime(obs, held.leaseDeadline!, 'the lease to run out');
    expect((await other.sweep()).stalled).toBe(1);
    const [current] = await other.lease();
    expect(current!.job.id).toBe('j');
    const before = await q.getJob('j');
    release();
    await waitUntil(() => got.some((e) => e.type === 'lost'), 'the lost event');
    expect(asked).toBe(1); // asked, but the nack carrying its delay was refused
    expect(await q.getJob('j')).toEqual(before);
    expect(before).toMatchObject({ state: 'working', failures: 1, lastError: 'lease expired' });
    expect(await other.ack(current!)).toBe(true);
  });

  test('options: a custom backoff needs a strategy name (checked at add, not looked up); strategies are functions', async () => {
    const { q } = warnedQueue();
    const bad: Array<[unknown, string]> = [
      [{ type: 'custom' }, 'opts.backoff.strategy'],
      [{ type: 'custom', strategy: '' }, 'opts.backoff.strategy'],
      [{ type: 'custom', strategy: 7 }, 'opts.backoff.strategy'],
      [{ type: 'custom', strategy: 's', delayMs: 5 }, 'opts.backoff'],
      [{ type: 'linear', delayMs: 5 }, 'opts.backoff.type'],
    ];
    for (const [backoff, field] of bad) {
      await expect(q.add('x', { backoff: backoff as never })).rejects.toMatchObject({ name: 'ValidationError', field });
    }
    expect(await q.counts()).toMatchObject({ pending: 0 });
    // a name no worker knows yet is fine at add, and as a queue default
    await q.add('x', { jobId: 'unknown', backoff: custom('registered-later') });
    const withDefault = res.queue<string>('defaults', { defaults: { backoff: custom('everywhere') } });
    await withDefault.add('x', { jobId: 'd' });
    expect((await withDefault.lease())[0]!.job.policy.backoff).toEqual(custom('everywhere'));
    expect(() => new Worker(q, failing, { autostart: false, backoffStrategies: { s: 5 as never } })).toThrow(ValidationError);
    expect(() => new Worker(q, failing, { autostart: false, backoffStrategies: { s: 5 as never } })).toThrow('backoffStrategies.s: must be a function');
    expect(() => new Worker(q, failing, { autostart: false, backoffStrategies: [] as never })).toThrow('backoffStrategies: must be an object of backoff strategies by name');
  });
});
