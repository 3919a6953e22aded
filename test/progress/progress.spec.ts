/**
 * Progress and log lines: written by the handler that holds a job's lease, kept with the
 * job (getJob), published as events, capped, refused for a stale lease, and gone with the
 * job. Black box through the public API, on a private redis-server.
 */
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { PayloadTooLargeError, ValidationError, Worker, type Job, type QueueEvent } from '../../lib/index.js';
import { runScript } from '../../lib/core/redis/scripts.js';
import { eventsReady, redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** A gate a handler waits at until the test opens it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

test('a handler reports progress and log lines: getJob shows them while it runs and after, listeners hear them', async () => {
  const q = res.queue<string, string>();
  const reader = res.twin<string, string>(q);
  const obs = res.client();
  const heard = firstValueFrom(
    reader.events().pipe(
      filter((e) => e.type === 'progress' || e.type === 'log'),
      take(4),
      toArray(),
    ),
  );
  await eventsReady(obs, reader);
  const halfway = gate();
  const finish = gate();
  res.worker(
    new Worker<string, string>(res.twin<string, string>(q), async (job: Job<string>) => {
      expect(await job.updateProgress(50)).toBe(true);
      expect(await job.log('fetched 3 pages')).toBe(true);
      expect(await job.log('parsed')).toBe(true);
      halfway.open();
      await finish.wait;
      expect(await job.updateProgress({ step: 'upload', pct: 90 })).toBe(true);
      return 'done';
    }),
  );
  const { id } = await q.add('report');
  await halfway.wait;
  expect(await reader.getJob(id)).toMatchObject({ state: 'working', progress: 50, logs: ['fetched 3 pages', 'parsed'] });
  finish.open();
  await waitUntil(async () => (await reader.getJob(id))?.state === 'completed', 'the job to complete');
  expect(await reader.getJob(id)).toMatchObject({ result: 'done', progress: { step: 'upload', pct: 90 }, logs: ['fetched 3 pages', 'parsed'] });
  const events = (await heard).map((e: QueueEvent) => ({ type: e.type, id: e.id, progress: e.progress, line: e.line }));
  expect(events).toEqual([
    { type: 'progress', id, progress: 50, line: undefined },
    { type: 'log', id, progress: undefined, line: 'fetched 3 pages' },
    { type: 'log', id, progress: undefined, line: 'parsed' },
    { type: 'progress', id, progress: { step: 'upload', pct: 90 }, line: undefined },
  ]);
});

test('a job without progress or logs reads as before: no progress, no lines', async () => {
  const q = res.queue<number>();
  const { id } = await q.add(1);
  const info = await q.getJob(id);
  expect(info).toMatchObject({ state: 'pending', logs: [] });
  expect(info).not.toHaveProperty('progress');
});

test('progress and logs outlive a failed attempt: the retry sees what the first attempt wrote', async () => {
  const q = res.queue<number>();
  const { id } = await q.add(1, { attempts: 2, backoff: { type: 'fixed', delayMs: 0 } });
  const [first] = await q.lease();
  await q.updateProgress(first!, 30);
  await q.log(first!, 'attempt 1 failed at step 2');
  await q.nack(first!, { error: 'boom', delayMs: 0 });
  const [second] = await q.lease();
  expect(second!.job.id).toBe(id);
  expect(await q.getJob(id)).toMatchObject({ state: 'working', progress: 30, logs: ['attempt 1 failed at step 2'] });
  await q.log(second!, 'attempt 2');
  expect((await q.getJob(id))!.logs).toEqual(['attempt 1 failed at step 2', 'attempt 2']);
});

test('a stale lease writes neither progress nor log lines', async () => {
  const q = res.queue<number>();
  const obs = res.client();
  const { id } = await q.add(1);
  const [old] = await q.lease({ leaseMs: 100 });
  await untilRedisTime(obs, old!.deadline + 1);
  expect((await q.sweep()).stalled).toBe(1);
  const [current] = await q.lease({ leaseMs: 10_000 });
  expect(current!.job.id).toBe(id);
  await q.updateProgress(current!, 10);
  expect(await q.updateProgress(old!, 99)).toBe(false);
  expect(await q.log(old!, 'from the past')).toBe(false);
  expect(await q.getJob(id)).toMatchObject({ progress: 10, logs: [] });
  expect(await q.ack(current!)).toBe(true);
  // acked: the lease that completed it no longer writes either
  expect(await q.updateProgress(current!, 100)).toBe(false);
  expect(await q.log(current!, 'after the ack')).toBe(false);
  expect(await q.getJob(id)).toMatchObject({ state: 'completed', progress: 10, logs: [] });
});

test('only the last maxLogLines lines are kept', async () => {
  const q = res.queue<number>('capped', { maxLogLines: 3 });
  const { id } = await q.add(1);
  const [l] = await q.lease();
  for (let i = 1; i <= 5; i++) expect(await q.log(l!, `line ${i}`)).toBe(true);
  expect((await q.getJob(id))!.logs).toEqual(['line 3', 'line 4', 'line 5']);
});

test('bad progress, bad lines and bad maxLogLines are refused with typed errors, writing nothing', async () => {
  const q = res.queue<number>('strict', { maxPayloadBytes: 64 });
  const obs = res.client();
  const { id } = await q.add(1);
  const [l] = await q.lease();
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  for (const bad of ['50%', null, undefined, true, NaN, Infinity, cyclic, () => 1]) {
    await expect(q.updateProgress(l!, bad as never)).rejects.toBeInstanceOf(ValidationError);
  }
  await expect(q.updateProgress(l!, { big: 'x'.repeat(100) })).rejects.toBeInstanceOf(PayloadTooLargeError);
  for (const bad of [42, null, { line: 'x' }]) await expect(q.log(l!, bad as never)).rejects.toBeInstanceOf(ValidationError);
  await expect(q.log(l!, 'é'.repeat(40))).rejects.toBeInstanceOf(PayloadTooLargeError);
  await expect(q.updateProgress({ job: {} } as never, 1)).rejects.toThrow(/lease/);
  expect(await obs.exists(q.keys.derived.progress, q.keys.derived.logged, q.keys.derived.log(id))).toBe(0);
  for (const bad of [0, -1, 1.5, '10', 100_001]) {
    expect(() => res.queue('bad', { maxLogLines: bad as never })).toThrow(/maxLogLines/);
  }
});

test('progress and lines go with their job: ack without retention, the end of retention, a purge, deleteQueue', async () => {
  const q = res.queue<number>();
  const obs = res.client();
  const gone = async (id: string) => (await obs.hexists(q.keys.derived.progress, id)) + (await obs.hexists(q.keys.derived.logged, id)) + (await obs.exists(q.keys.derived.log(id)));
  const write = async (opts: object = {}) => {
    const { id } = await q.add(1, opts);
    const [l] = await q.lease();
    await q.updateProgress(l!, 1);
    await q.log(l!, 'x');
    expect(await gone(id)).toBe(3);
    return l!;
  };
  // acked with no retention: dropped at once
  const a = await write({ keepCompletedMs: 0 });
  await q.ack(a);
  expect(await gone(a.job.id)).toBe(0);
  // kept 200 ms: dropped by the sweep after that
  const b = await write({ keepCompletedMs: 200 });
  await q.ack(b);
  expect(await gone(b.job.id)).toBe(3);
  await untilRedisTime(obs, (await redisNow(obs)) + 250);
  await q.sweep();
  expect(await gone(b.job.id)).toBe(0);
  // dead-lettered, then purged
  const c = await write();
  await q.reject(c, 'no');
  await q.purgeDead([c.job.id]);
  expect(await gone(c.job.id)).toBe(0);
  // the whole queue
  const d = await write();
  await q.deleteQueue();
  expect(await gone(d.job.id)).toBe(0);
});

test('a log call sent again after a lost reply appends its line once (the writer and number of each line)', async () => {
  const q = res.queue<number>();
  const { id } = await q.add(1);
  const [l] = await q.lease();
  // what ioredis does after a reconnect: the same call, with the same arguments, once more
  const send = (n: number, line: string) => runScript(q.client, 'log', q.keys.call, ['0', id, l!.token, 'writer-a', n, line, 100]);
  expect(await send(1, 'one')).toBe(1);
  expect(await send(1, 'one')).toBe(1);
  expect(await send(2, 'two')).toBe(2);
  expect(await send(1, 'one')).toBe(2);
  // another writer (a process of its own) counts on its own
  expect(await runScript(q.client, 'log', q.keys.call, ['0', id, l!.token, 'writer-b', 1, 'three', 100])).toBe(3);
  expect((await q.getJob(id))!.logs).toEqual(['one', 'two', 'three']);
});
