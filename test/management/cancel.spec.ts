/**
 * cancel(id): a job not leased leaves the queue (as remove() takes it); a leased one's lease
 * ends at once in one script, dead-lettered or retried as a failed attempt with a
 * CancelledError, and its Worker aborts the handler's signal within moments (a notice on the
 * queue's cancel channel), not at its next heartbeat, and frees its slot. The holder's late
 * ack changes nothing. An unknown or finished job: false, nothing written.
 */
import type { Redis } from 'ioredis';
import {
  BatchWorker,
  CancelledError,
  RelqError,
  ValidationError,
  Worker,
  type Job,
  type Queue,
  type QueueEvent,
  type WorkerEvent,
} from '../../lib/index.js';
import { eventsReady, queueKeysIn, useRedis, waitUntil } from '../support/engine-harness.js';
import { booksAgree, whereIs } from '../support/job-indexes.js';
import { keyContent } from '../support/key-read.js';

const res = useRedis();

const fixed0 = { type: 'fixed' as const, delayMs: 0, jitter: 0 };
/** The most a cancel may take to reach a running handler under the default 30 s lease (its heartbeat comes after 15 s). */
const NOTICE_BOUND_MS = 2000;

/** Every key of the queue with its serialized value, but the replay records of settle calls (written also when they change nothing). */
async function snapshot(c: Redis, q: Queue<any, any>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of await queueKeysIn(c, q)) if (!k.includes(':req:')) out[k] = await keyContent(c, k);
  return out;
}

/** Waits until `subscribers` Queue objects' workers listen to the queue's cancel notices (a cancel before that is found by a touch). */
async function cancelsReady(c: Redis, q: Queue<any, any>, subscribers = 1): Promise<void> {
  await waitUntil(async () => {
    const r = (await c.call('PUBSUB', 'SHARDNUMSUB', q.keys.derived.cancels)) as [string, number];
    return Number(r[1]) >= subscribers;
  }, 'the cancel notices subscription');
}

/** Resolves with the reason once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));
}

/**
 * A Worker (default leaseMs: 30 s) whose handler runs job 'a' until its signal aborts (or, with
 * `ignore`, until `release()`), the others at once. `reasons` gets each abort reason, with the
 * time it took from `cancelledAt`.
 */
function cancellableWorker(q: Queue<string, string>, opts: { ignore?: boolean; concurrency?: number } = {}) {
  const started: string[] = [];
  const reasons: Array<{ id: string; reason: unknown; afterMs: number }> = [];
  const events: Array<WorkerEvent<string, string>> = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const clock = { cancelledAt: 0 };
  const w = res.worker(
    new Worker<string, string>(
      q,
      async (job: Job<string>) => {
        started.push(job.id);
        if (job.id !== 'a' && job.id !== 'a2') return `done ${job.id}`;
        const reason = aborted(job.signal).then((r) => reasons.push({ id: job.id, reason: r, afterMs: Date.now() - clock.cancelledAt }));
        if (opts.ignore) {
          await released;
          return 'late result';
        }
        await reason;
        throw job.signal.reason;
      },
      { concurrency: opts.concurrency ?? 1 },
    ),
  );
  w.events.subscribe((e) => e.type !== 'drained' && events.push(e)); // 'drained' is the loop's, not a job's (test/core/drained.spec.ts)
  return { w, started, reasons, events, release, clock };
}

describe('a job not leased is removed', () => {
  test('pending, delayed and grouped jobs: removed from every index, false the second time', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('p', { jobId: 'p' });
    await q.add('d', { jobId: 'd', delayMs: 60_000 });
    await q.add('d2', { jobId: 'd2', delayMs: 60_000 });
    await q.add('g', { jobId: 'g', group: 'tenant' });
    await q.add('other', { jobId: 'other', group: 'tenant' });
    for (const id of ['p', 'd', 'g']) {
      expect(await q.cancel(id)).toBe('removed');
      expect(await whereIs(obs, q, id)).toEqual([]);
      expect(await q.getJob(id)).toBeNull();
      expect(await q.cancel(id)).toBe(false);
    }
    await booksAgree(obs, q); // nextDue moved to d2, the group's count down by one
    expect(await q.counts()).toMatchObject({ pending: 1, delayed: 1, dead: 0 });
    // the id is free again, as after remove()
    expect(await q.add('again', { jobId: 'p' })).toEqual({ id: 'p', created: true });
  });

  test('a cancelled job frees its deduplication id, waiting or running', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const first = await q.add('first', { deduplication: { id: 'report' } });
    expect(await q.cancel(first.id)).toBe('removed');
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
    const second = await q.add('second', { deduplication: { id: 'report' } });
    expect(second.created).toBe(true);
    await q.lease();
    expect(await q.cancel(second.id)).toBe('dead');
    expect(await obs.hlen(q.keys.derived.dedupIds)).toBe(0);
    expect((await q.add('third', { deduplication: { id: 'report' } })).created).toBe(true);
  });

  test("events: 'cancelled' with the reason, then 'removed'", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const seen: QueueEvent[] = [];
    const sub = q.events().subscribe((e) => seen.push(e));
    await eventsReady(obs, q);
    await q.add('p', { jobId: 'p' });
    expect(await q.cancel('p', { reason: 'no longer wanted' })).toBe('removed');
    await waitUntil(() => seen.some((e) => e.type === 'removed'), 'the removed event');
    sub.unsubscribe();
    expect(seen.filter((e) => e.id === 'p').map((e) => [e.type, e.reason])).toEqual([
      ['added', undefined],
      ['cancelled', 'no longer wanted'],
      ['removed', undefined],
    ]);
  });
});

describe('a leased job: its lease ends at once', () => {
  test("dead (the default): the running handler's signal aborts with CancelledError within the bound, its slot goes to the next job", async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    const { w, started, reasons, events, clock } = cancellableWorker(q);
    await q.add('a', { jobId: 'a', attempts: 3 });
    await q.add('b', { jobId: 'b' });
    await waitUntil(() => started.includes('a'), "job 'a' runs");
    await cancelsReady(obs, q);
    expect(started).toEqual(['a']); // concurrency 1: 'b' waits for the slot
    clock.cancelledAt = Date.now();
    expect(await q.cancel('a', { reason: 'customer asked' })).toBe('dead');
    await waitUntil(() => reasons.length === 1, 'the signal aborts', NOTICE_BOUND_MS);
    const { reason, afterMs } = reasons[0]!;
    expect(reason).toBeInstanceOf(CancelledError);
    expect(reason).toBeInstanceOf(RelqError);
    expect(reason).toMatchObject({ jobId: 'a', reason: 'customer asked', code: 'RELQ_CANCELLED', message: 'job a was cancelled: customer asked' });
    expect(afterMs).toBeLessThan(NOTICE_BOUND_MS);
    await waitUntil(async () => (await q.getJob('b'))?.state === 'completed', "'b' ran in the freed slot");
    const cancelled = events.find((e) => e.type === 'cancelled');
    expect(cancelled).toMatchObject({ type: 'cancelled', job: { id: 'a' }, error: reason });
    // the handler's own failure after the abort was dropped: one failed attempt, the cancel's
    expect(events.map((e) => e.type).filter((t) => t !== 'completed')).toEqual(['cancelled']);
    const info = await q.getJob('a');
    expect(info).toMatchObject({ state: 'dead', failures: 1, lastError: 'CancelledError: job a was cancelled: customer asked' });
    expect(await whereIs(obs, q, 'a')).toEqual(['jobs', 'dead']);
    expect(w.inFlight).toBe(0);
    await booksAgree(obs, q);
  });

  test('retry: a failed attempt after the backoff, leased again; when none remain it is dead', async () => {
    const q = res.queue<string, string>();
    const { started, reasons, events } = cancellableWorker(q);
    await q.add('a', { jobId: 'a', attempts: 2, backoff: fixed0 });
    await waitUntil(() => started.length === 1, "job 'a' runs");
    await cancelsReady(res.client(), q);
    expect(await q.cancel('a', { outcome: 'retry' })).toBe('retried');
    await waitUntil(() => reasons.length === 1, 'the first signal aborts', NOTICE_BOUND_MS);
    expect(reasons[0]!.reason).toMatchObject({ jobId: 'a', reason: undefined, message: 'job a was cancelled' });
    // its second attempt runs on the same worker, with the cancel as its last error
    await waitUntil(() => started.length === 2, "job 'a' runs again");
    expect(await q.getJob('a')).toMatchObject({ state: 'working', dequeues: 2, failures: 1, lastError: 'CancelledError: job a was cancelled' });
    expect(await q.cancel('a', { outcome: 'retry' })).toBe('dead');
    await waitUntil(() => reasons.length === 2, 'the second signal aborts', NOTICE_BOUND_MS);
    expect(await q.getJob('a')).toMatchObject({ state: 'dead', failures: 2 });
    expect(events.filter((e) => e.type === 'cancelled')).toHaveLength(2);
  });

  test("retry follows the job's backoff: delayed by it", async () => {
    const q = res.queue<string>();
    await q.add('a', { jobId: 'a', attempts: 3, backoff: { type: 'fixed', delayMs: 60_000, jitter: 0 } });
    const [lease] = await q.lease();
    expect(await q.cancel('a', { outcome: 'retry', reason: 'later' })).toBe('retried');
    const info = await q.getJob('a');
    expect(info).toMatchObject({ state: 'delayed', failures: 1, lastError: 'CancelledError: job a was cancelled: later' });
    expect(info!.runAt! - info!.errors![0]!.at).toBe(60_000);
    expect(await q.ack(lease!, 'late')).toBe(false);
  });

  test('the late ack of a handler that ignores its signal is refused: the job stays dead; its slot was freed at once', async () => {
    const q = res.queue<string, string>();
    const { w, started, reasons, events, release } = cancellableWorker(q, { ignore: true });
    await q.add('a', { jobId: 'a' });
    await q.add('b', { jobId: 'b' });
    await waitUntil(() => started.includes('a'), "job 'a' runs");
    await cancelsReady(res.client(), q);
    expect(await q.cancel('a')).toBe('dead');
    await waitUntil(() => reasons.length === 1, 'the signal aborts', NOTICE_BOUND_MS);
    // the handler of 'a' still runs, yet 'b' got the one slot
    await waitUntil(async () => (await q.getJob('b'))?.state === 'completed', "'b' ran while 'a' still ran", NOTICE_BOUND_MS);
    expect(w.inFlight).toBe(0);
    release(); // 'a' returns its result now: dropped
    await q.add('c', { jobId: 'c' });
    await waitUntil(async () => (await q.getJob('c'))?.state === 'completed', "'c' completed after the late result");
    expect(await q.getJob('a')).toMatchObject({ state: 'dead', failures: 1 });
    expect(events.filter((e) => 'job' in e && e.job.id === 'a').map((e) => e.type)).toEqual(['cancelled']);
  });

  test('a lease held through the API: ack, nack, touch and progress of the cancelled lease change nothing', async () => {
    const q = res.queue<string, string>();
    const obs = res.client();
    await q.add('a', { jobId: 'a', attempts: 5, backoff: fixed0 });
    const [lease] = await q.lease();
    expect(await q.cancel('a', { outcome: 'retry' })).toBe('retried');
    const before = await snapshot(obs, q);
    expect(await q.touch(lease!, 10_000)).toBe(false);
    expect(await q.ack(lease!, 'late')).toBe(false);
    expect(await q.nack(lease!, { error: 'late' })).toBe(false);
    expect(await q.reject(lease!, 'late')).toBe(false);
    expect(await q.updateProgress(lease!, 50)).toBe(false);
    expect(await snapshot(obs, q)).toEqual(before);
    expect(await q.getJob('a')).toMatchObject({ state: 'pending', failures: 1 });
  });

  test("events: 'cancelled', then the failed attempt's", async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const seen: QueueEvent[] = [];
    const sub = q.events().subscribe((e) => seen.push(e));
    await eventsReady(obs, q);
    await q.add('a', { jobId: 'a', attempts: 1 });
    await q.lease();
    expect(await q.cancel('a', { outcome: 'retry', reason: 'stop' })).toBe('dead');
    await waitUntil(() => seen.some((e) => e.type === 'dead'), 'the dead event');
    sub.unsubscribe();
    expect(seen.filter((e) => e.id === 'a').map((e) => e.type)).toEqual(['added', 'leased', 'cancelled', 'failed', 'dead']);
    expect(seen.find((e) => e.type === 'cancelled')).toMatchObject({ reason: 'stop' });
  });

  test("a flow's parent waiting for its children: removed with them, and a leased child's handler is aborted", async () => {
    const q = res.queue<string, string>();
    const { reasons, started } = cancellableWorker(q);
    await q.addFlow({ data: 'parent', opts: { jobId: 'parent' }, children: [{ data: 'a', opts: { jobId: 'a' } }, { data: 'c', opts: { jobId: 'c', delayMs: 60_000 } }] });
    await waitUntil(() => started.includes('a'), "child 'a' runs");
    await cancelsReady(res.client(), q);
    expect((await q.getJob('parent'))?.state).toBe('waiting-children');
    expect(await q.cancel('parent')).toBe('removed');
    await waitUntil(() => reasons.length === 1, "the child's signal aborts", NOTICE_BOUND_MS);
    expect(reasons[0]!.reason).toBeInstanceOf(CancelledError);
    for (const id of ['parent', 'a', 'c']) expect(await q.getJob(id)).toBeNull();
  });
});

test('BatchWorker: a cancelled job of a running batch aborts that job alone; the others complete', async () => {
  const q = res.queue<string, string>();
  const reasons: unknown[] = [];
  const events: Array<WorkerEvent<string, string>> = [];
  let batches = 0;
  const w = res.worker(
    new BatchWorker<string, string>(
      q,
      async (jobs) => {
        batches += 1;
        const b = jobs.find((j) => j.id === 'b')!;
        reasons.push(await aborted(b.signal));
        return jobs.map((j) => ({ ok: true as const, result: `done ${j.id}` }));
      },
      { size: 3, autostart: false },
    ),
  );
  w.events.subscribe((e) => e.type !== 'drained' && events.push(e)); // 'drained' is the loop's, not a job's (test/core/drained.spec.ts)
  await q.addBulk(['a', 'b', 'c'].map((id) => ({ data: id, opts: { jobId: id } })));
  w.start();
  await waitUntil(async () => (await q.counts()).working === 3, 'the batch runs');
  await cancelsReady(res.client(), q);
  expect(await q.cancel('b', { reason: 'not this one' })).toBe('dead');
  await waitUntil(() => reasons.length === 1, "'b' aborts", NOTICE_BOUND_MS);
  expect(reasons[0]).toMatchObject({ jobId: 'b', reason: 'not this one' });
  await waitUntil(async () => (await q.counts()).completed === 2, "'a' and 'c' completed");
  expect(await q.getJob('b')).toMatchObject({ state: 'dead', lastError: 'CancelledError: job b was cancelled: not this one' });
  expect(events.map((e) => [e.type, 'job' in e ? e.job.id : undefined]).sort()).toEqual([
    ['cancelled', 'b'],
    ['completed', 'a'],
    ['completed', 'c'],
  ]);
  expect(batches).toBe(1);
});

test('an unknown job, a completed one and a dead one: false, nothing written', async () => {
  const q = res.queue<string, string>();
  const obs = res.client();
  await q.add('done', { jobId: 'done' });
  await q.ack((await q.lease())[0]!, 'ok');
  await q.add('gone', { jobId: 'gone', attempts: 1 });
  await q.reject((await q.lease())[0]!, 'no');
  const before = await snapshot(obs, q);
  expect(await q.cancel('missing')).toBe(false);
  expect(await q.cancel('done')).toBe(false);
  expect(await q.cancel('gone', { outcome: 'retry' })).toBe(false);
  expect(await snapshot(obs, q)).toEqual(before);
});

test('bad input: a ValidationError before anything is written', async () => {
  const q = res.queue<string>();
  const obs = res.client();
  await q.add('p', { jobId: 'p' });
  const before = await snapshot(obs, q);
  for (const [id, opts, field] of [
    ['p', { outcome: 'later' }, 'outcome'],
    ['p', { reason: 42 }, 'reason'],
    ['p', { force: true }, 'cancel options'],
    ['', {}, 'id'],
  ] as Array<[string, object, string]>) {
    const err = await q.cancel(id, opts as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field });
  }
  expect(await snapshot(obs, q)).toEqual(before);
});

test("a worker that hears no notice learns of the cancel from its heartbeat's touch: CancelledError with its reason, not LeaseLostError", async () => {
  // an ACL user that may not subscribe to the cancel channel: the notices never come
  const admin = res.client();
  const first = res.queue<string, string>('deaf');
  const user = `deaf-${first.prefix}`;
  await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', 'resetchannels', `&${first.keys.byName.events}`, '+@all');
  try {
    const warnings: string[] = [];
    const q = res.queue<string, string>('deaf', {
      prefix: first.prefix,
      connection: `redis://${user}:pw@${res.server.host}:${res.server.port}`,
      onWarning: (w) => warnings.push(`${w.code} ${w.message}`),
    });
    const reasons: unknown[] = [];
    const started: string[] = [];
    res.worker(
      new Worker<string, string>(
        q,
        async (job) => {
          started.push(job.id);
          reasons.push(await aborted(job.signal));
          return 'late';
        },
        { leaseMs: 1000 },
      ),
    );
    await waitUntil(() => warnings.some((w) => w.startsWith('RELQ_EVENTS_RETRY') && w.includes('cancel notices cannot subscribe')), 'the warning');
    await q.add('a', { jobId: 'a' });
    await waitUntil(() => started.length === 1, "job 'a' runs");
    expect(await first.cancel('a', { reason: 'not wanted' })).toBe('dead'); // by a user that may publish the notice
    await waitUntil(() => reasons.length === 1, 'the heartbeat finds the lease cancelled', 3000);
    expect(reasons[0]).toBeInstanceOf(CancelledError);
    // the touch carries the cancel's reason, as the notice would have
    expect(reasons[0]).toMatchObject({ jobId: 'a', reason: 'not wanted', message: 'job a was cancelled: not wanted' });
    expect(await q.getJob('a')).toMatchObject({ state: 'dead', failures: 1 });
    // a cancel without a reason: none
    await q.add('b', { jobId: 'b' });
    await waitUntil(() => started.length === 2, "job 'b' runs");
    expect(await first.cancel('b')).toBe('dead');
    await waitUntil(() => reasons.length === 2, 'the heartbeat finds the lease cancelled', 3000);
    expect(reasons[1]).toMatchObject({ jobId: 'b', reason: undefined, message: 'job b was cancelled' });
  } finally {
    await res.closeAll();
    await res.client().call('ACL', 'DELUSER', user);
  }
});
