/**
 * A queue's metrics history (`metrics` option, `getMetrics()`): what a worker's settles write
 * per minute in Redis, read back by any Queue object; the cost of keeping it, and that a queue
 * without it pays nothing.
 */
import { Queue, UnrecoverableError, ValidationError, Worker } from '../../lib/index.js';
import type { MetricsHistory } from '../../lib/index.js';
import { ackItem } from '../../lib/core/settles/settle-items.js';
import { internalsOf } from '../../lib/core/queue/internals.js';
import { commandStats, redisNow, scanKeys, sleep, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** Waits until the history's total says `n` attempts ended (completed + failed + dead). */
async function ended(q: Queue<any, any>, n: number, what: string): Promise<MetricsHistory> {
  let last: MetricsHistory | undefined;
  await waitUntil(
    async () => {
      last = await q.getMetrics();
      const t = last.total;
      return t.completed + t.failed + t.dead >= n;
    },
    what,
    20_000,
    50,
  );
  return last!;
}

test('a worker settles: completed, failed (retried) and dead attempts are counted per minute, expired leases too', async () => {
  const q = res.queue<{ kind: string }>('mh-counts', { metrics: { keepMinutes: 10 }, defaults: { attempts: 3, backoff: 0 } });
  const tries = new Map<string, number>();
  await q.addBulk([
    ...Array.from({ length: 5 }, (_, i) => ({ data: { kind: 'ok' }, opts: { jobId: `ok-${i}` } })),
    ...Array.from({ length: 3 }, (_, i) => ({ data: { kind: 'flaky' }, opts: { jobId: `flaky-${i}` } })),
    ...Array.from({ length: 2 }, (_, i) => ({ data: { kind: 'broken' }, opts: { jobId: `broken-${i}`, attempts: 2 } })),
    { data: { kind: 'fatal' }, opts: { jobId: 'fatal' } },
  ]);
  const w = res.worker(
    new Worker(q, async (job) => {
      const n = (tries.get(job.id) ?? 0) + 1;
      tries.set(job.id, n);
      if (job.data.kind === 'flaky' && n === 1) throw new Error('once');
      if (job.data.kind === 'broken') throw new Error('always');
      if (job.data.kind === 'fatal') throw new UnrecoverableError('no');
      return 1;
    }),
  );
  // ok 5 + flaky 3 completed; flaky 3 + broken 2 failed and retried; broken 2 + fatal dead
  const h = await ended(q, 8 + 5 + 3, 'every attempt counted');
  await w.close();
  expect(h.keepMinutes).toBe(10);
  expect((await q.queueState()).metricsKeepMinutes).toBe(10);
  expect(h.total).toMatchObject({ completed: 8, failed: 5, dead: 3 });
  // each attempt a handler ended is timed
  expect(h.total.runTime.count).toBe(16);

  // an expired lease: counted as a failed attempt when the sweep returns it, not timed
  await q.add({ kind: 'ok' }, { jobId: 'stalls' });
  const [lease] = await q.lease({ leaseMs: 50 });
  expect(lease).toBeDefined();
  await waitUntil(async () => (await redisNow(res.client())) > lease!.deadline, 'the lease to run out');
  expect((await q.sweep()).stalled).toBe(1);
  const after = await q.getMetrics();
  expect(after.total).toMatchObject({ completed: 8, failed: 6, dead: 3 });
  expect(after.total.runTime.count).toBe(16);

  // one point per minute, oldest first, the last one the current minute; they sum to the total
  const now = await redisNow(res.client());
  expect(after.points).toHaveLength(60);
  expect(after.points.at(-1)!.at).toBe(now - (now % 60_000));
  after.points.forEach((p, i) => i > 0 && expect(p.at - after.points[i - 1]!.at).toBe(60_000));
  const sum = (k: 'completed' | 'failed' | 'dead') => after.points.reduce((s, p) => s + p[k], 0);
  expect({ completed: sum('completed'), failed: sum('failed'), dead: sum('dead') }).toEqual({ completed: 8, failed: 6, dead: 3 });
  const empty = after.points.find((p) => p.completed + p.failed + p.dead === 0)!;
  expect(empty.runTime).toEqual({ count: 0, p50: null, p95: null, p99: null });

  // another Queue object (no metrics option of its own) reads the same history from Redis
  const other = res.twin(q);
  expect(await other.getMetrics()).toEqual(after);
  // and a range: just the current minute
  const current = await other.getMetrics({ from: now, to: now });
  expect(current.points).toHaveLength(1);
  expect(current.points[0]!.at).toBe(now - (now % 60_000));
});

test("run-time quantiles are within the bucket error of the handlers' known durations", async () => {
  const q = res.queue<{ ms: number }>('mh-quantiles', { metrics: true });
  // 18 jobs of 60 ms, 2 of 400 ms: p50 is a 60 ms one, p95 and p99 the 400 ms ones
  await q.addBulk([...Array.from({ length: 18 }, () => ({ data: { ms: 60 } })), ...Array.from({ length: 2 }, () => ({ data: { ms: 400 } }))]);
  const w = res.worker(new Worker(q, async (job) => sleep(job.data.ms)));
  const h = await ended(q, 20, 'all completed');
  await w.close();
  expect(h.keepMinutes).toBe(1440); // metrics: true keeps a day
  const { runTime } = h.total;
  expect(runTime.count).toBe(20);
  // a bucket's value is within 9 % of any run time in it; a run time is the handler's and
  // the worker's own work (lease to settle): allow that on a busy machine
  const near = (v: number | null, ms: number) => {
    expect(v).not.toBeNull();
    expect(v!).toBeGreaterThanOrEqual(ms * 0.91);
    expect(v!).toBeLessThanOrEqual((ms + 150) * 1.1);
  };
  near(runTime.p50, 60);
  near(runTime.p95, 400);
  near(runTime.p99, 400);
  // per minute too: the minutes that saw jobs hold all of them
  const timed = h.points.filter((p) => p.runTime.count > 0);
  expect(timed.reduce((s, p) => s + p.runTime.count, 0)).toBe(20);
});

test("each quantile is its bucket's middle: within 2^(1/8) of the run time measured on the Redis clock", async () => {
  const q = res.queue<number>('mh-exact', { metrics: true });
  const obs = res.client();
  const leaseMs = 60_000;
  // three attempts of about 30, 120 and 400 ms: p50 is the middle one, p95 and p99 the longest
  const spans: Array<[number, number]> = [];
  for (const ms of [30, 120, 400]) {
    await q.add(ms);
    const [lease] = await q.lease({ leaseMs });
    const start = lease!.deadline - leaseMs; // the lease's start, Redis time
    await sleep(ms);
    const before = await redisNow(obs);
    await q.ack(lease!);
    const after = await redisNow(obs);
    spans.push([before - start, after - start]);
  }
  const { runTime } = (await q.getMetrics()).total;
  expect(runTime.count).toBe(3);
  const within = (v: number | null, [lo, hi]: [number, number]) => {
    expect(v).not.toBeNull();
    expect({ v, lo, hi, ok: v! >= lo / 2 ** 0.125 - 0.5 && v! <= hi * 2 ** 0.125 + 0.5 }).toMatchObject({ ok: true });
  };
  spans.sort((a, b) => a[0] - b[0]); // by run time, whatever a busy machine made of the sleeps
  within(runTime.p50, spans[1]!);
  within(runTime.p95, spans[2]!);
  within(runTime.p99, spans[2]!);
});

test('a minute expires keepMinutes after it ends: its key carries that expiry from its first write', async () => {
  const q = res.queue('mh-expiry', { metrics: { keepMinutes: 3 } });
  const obs = res.client();
  await q.add(1);
  const [lease] = await q.lease();
  await q.ack(lease!);
  const keys = (await scanKeys(obs, `${q.keys.tag}:mx:*`)).sort();
  expect(keys.length).toBeGreaterThanOrEqual(1);
  for (const key of keys) {
    const minute = Number(key.slice(key.lastIndexOf(':') + 1));
    expect(Number(await obs.call('PEXPIRETIME', key))).toBe((minute + 1 + 3) * 60_000);
  }
});

test('a queue without metrics runs no command more per lease call; one that keeps them a few per call, not per job', async () => {
  const off = res.queue<number>('mh-off');
  const on = res.queue<number>('mh-on', { metrics: true });
  const obs = res.client();
  const perCall = async (q: Queue<number>, batch: number, calls: number): Promise<Record<string, number>> => {
    await q.addBulk(Array.from({ length: batch * (calls + 1) }, (_, i) => ({ data: i })));
    const lease = internalsOf<number>(q)!;
    let prev = await lease.leaseStep([], batch, 10_000, false);
    const s0 = await commandStats(obs);
    for (let i = 0; i < calls; i++) prev = await lease.leaseStep(prev.leases.map((l) => ackItem(l, '')), batch, 10_000, false);
    const d = statsDelta(s0, await commandStats(obs));
    delete d.info;
    for (const l of prev.leases) await q.ack(l);
    return d;
  };
  const plain = await perCall(off, 1, 20);
  expect(plain.hincrby).toBeUndefined();
  expect(plain.pexpireat).toBeUndefined();
  // the same calls on a queue keeping metrics: what the plain one ran, and its HINCRBYs
  const kept = await perCall(on, 1, 20);
  const { hincrby, pexpireat, ...rest } = kept;
  expect(rest).toEqual(plain);
  // per call: completed and the run time's bucket (a bucket or two more, and expiries, at first)
  expect(hincrby).toBeGreaterThanOrEqual(2 * 20);
  expect(hincrby! + (pexpireat ?? 0)).toBeLessThanOrEqual(2 * 20 + 10);
  // 50 acks in one call: written once per touched field, not per job
  const batched = await perCall(on, 50, 2);
  expect(batched.hincrby).toBeLessThanOrEqual(2 * 6);
  expect((await on.getMetrics()).total.completed).toBe(21 + 150);
});

test('deleteQueue removes the minutes kept; metrics: false stops keeping them', async () => {
  const q = res.queue('mh-delete', { metrics: { keepMinutes: 5 } });
  const obs = res.client();
  await q.add(1);
  await q.ack((await q.lease())[0]!);
  expect(await scanKeys(obs, `${q.keys.tag}:mx:*`)).not.toEqual([]);
  await q.deleteQueue({ tombstoneMs: 1 });
  await waitUntil(async () => (await obs.exists(q.keys.byName.meta)) === 0, 'the tombstone gone');
  expect(await scanKeys(obs, `${q.keys.tag}:mx:*`)).toEqual([]);

  const stop = res.queue('mh-stop', { metrics: true });
  await stop.add(1);
  await stop.ack((await stop.lease())[0]!);
  const off = res.twin(stop, { metrics: false });
  await off.add(2);
  await off.ack((await off.lease())[0]!);
  const h = await off.getMetrics();
  expect(h.keepMinutes).toBe(0);
  expect((await off.queueState()).metricsKeepMinutes).toBe(0);
  expect(h.total.completed).toBe(1); // the second job's settle wrote nothing
});

test('bad options and ranges are refused before anything is written', async () => {
  expect(() => new Queue('mh-bad', { connection: res.server.url, metrics: { keepMinutes: 0 } })).toThrow(ValidationError);
  expect(() => new Queue('mh-bad', { connection: res.server.url, metrics: { keepMinutes: 10_081 } })).toThrow(/metrics.keepMinutes/);
  expect(() => new Queue('mh-bad', { connection: res.server.url, metrics: { keep: 5 } as never })).toThrow(/unknown option 'keep'/);
  const q = res.queue('mh-range');
  await expect(q.getMetrics({ from: 2_000_000, to: 1_000_000 })).rejects.toThrow(/to: must not be before from/);
  await expect(q.getMetrics({ from: 0, to: 11_000 * 60_000 })).rejects.toThrow(/at most 10081 minutes/);
  await expect(q.getMetrics({ from: -1 })).rejects.toThrow(ValidationError);
  await expect(q.getMetrics({ since: 1 } as never)).rejects.toThrow(/unknown option 'since'/);
  // a range without its start ends at `to` and reads the hour before it
  expect((await q.getMetrics({ to: 120 * 60_000 })).points.map((p) => p.at)).toEqual(Array.from({ length: 60 }, (_, i) => (61 + i) * 60_000));
});
