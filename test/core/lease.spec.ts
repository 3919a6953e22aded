import { useRedis, blockedClients, commandStats, engineCalls, redisNow, scriptCalls, statsDelta, untilRedisTime, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

async function leaseAllOneByOne(q: { lease: (o: { count: number }) => Promise<Array<{ job: { data: unknown } }>> }) {
  const seen: unknown[] = [];
  for (;;) {
    const [l] = await q.lease({ count: 1 });
    if (!l) return seen;
    seen.push(l.job.data);
  }
}

describe('ordering', () => {
  test('FIFO within one priority', async () => {
    const q = res.queue<number>();
    for (let i = 0; i < 5; i++) await q.add(i);
    await q.addBulk([{ data: 5 }, { data: 6 }, { data: 7 }]);
    expect(await leaseAllOneByOne(q)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test('FIFO within a non-zero priority too', async () => {
    const q = res.queue<number>();
    for (let i = 0; i < 5; i++) await q.add(i, { priority: 7 });
    for (let i = 5; i < 8; i++) await q.add(i, { priority: -3 });
    expect(await leaseAllOneByOne(q)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test('higher priority first, one at a time and in one multi-lease', async () => {
    const jobs: Array<[string, number]> = [
      ['a0', 0],
      ['b5', 5],
      ['c-5', -5],
      ['d5', 5],
      ['e10', 10],
      ['f0', 0],
      ['g-1', -1],
      ['h1000', 1000],
      ['i-1000', -1000],
    ];
    const expected = ['h1000', 'e10', 'b5', 'd5', 'a0', 'f0', 'g-1', 'c-5', 'i-1000'];
    const q1 = res.queue<string>();
    for (const [d, p] of jobs) await q1.add(d, { priority: p });
    expect(await leaseAllOneByOne(q1)).toEqual(expected);

    const q2 = res.queue<string>();
    await q2.addBulk(jobs.map(([d, p]) => ({ data: d, opts: { priority: p } })));
    const leases = await q2.lease({ count: 20 });
    expect(leases.map((l) => l.job.data)).toEqual(expected);
    expect(leases.map((l) => l.job.priority)).toEqual([1000, 10, 5, 5, 0, 0, -1, -5, -1000]);
  });

  test('a multi-lease smaller than the positive-priority backlog takes the highest ones', async () => {
    const q = res.queue<string>();
    await q.add('p0');
    await q.add('p1', { priority: 1 });
    await q.add('p2', { priority: 2 });
    await q.add('p3', { priority: 3 });
    expect((await q.lease({ count: 2 })).map((l) => l.job.data)).toEqual(['p3', 'p2']);
    expect((await q.lease({ count: 2 })).map((l) => l.job.data)).toEqual(['p1', 'p0']);
  });

  test('a promoted delayed job keeps its priority', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('low');
    const { id } = await q.add('high-delayed', { priority: 9, delayMs: 150 });
    await untilRedisTime(obs, (await q.getJob(id))!.runAt!, 'the delayed job to be due');
    expect((await q.lease({ count: 2 })).map((l) => l.job.data)).toEqual(['high-delayed', 'low']);
  });
});

describe('a queue that never used priorities', () => {
  // Its lease calls skip the look at the prioritized set (meta np, adds/pending.lua); every
  // way a prioritized job arrives must bring the look back.
  test('its lease calls do not read the prioritized set', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ data: i })));
    const before = await commandStats(obs);
    for (let i = 0; i < 20; i++) await q.ackBatch(await q.lease({ count: 1 }));
    const d = statsDelta(before, await commandStats(obs));
    expect(scriptCalls(d)).toBe(40);
    expect(d.zrange).toBe(1); // the first call looks, finds none, and marks the queue
    expect(d.lpop).toBe(20);
  });

  test('a prioritized job added afterwards is leased first', async () => {
    const q = res.queue<string>();
    await q.add('first');
    await q.lease({ count: 1 }); // marks it
    await q.add('plain');
    await q.add('urgent', { priority: 5 });
    expect((await q.lease({ count: 1 }))[0]!.job.data).toBe('urgent');
  });

  test('a prioritized delayed job promoted by the lease call itself is leased first', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('first');
    await q.lease({ count: 1 }); // marks it
    const { id } = await q.add('urgent', { priority: 5, delayMs: 150 });
    await q.add('plain');
    await untilRedisTime(obs, (await q.getJob(id))!.runAt!, 'the delayed job to be due');
    expect((await q.lease({ count: 1 }))[0]!.job.data).toBe('urgent');
  });

  test('a prioritized job a settle puts back is leased first', async () => {
    const q = res.queue<string>();
    await q.add('urgent', { priority: 5 });
    await q.add('plain 1');
    await q.add('plain 2');
    const [held] = await q.lease({ count: 1 });
    expect(held!.job.data).toBe('urgent');
    await q.lease({ count: 1 }); // 'plain 1', with the prioritized set empty: marks it
    expect(await q.requeue(held!)).toBe(true);
    expect((await q.lease({ count: 1 }))[0]!.job.data).toBe('urgent');
  });

  test('a prioritized job written under the mark (an older version adds it so) is leased after the next sweep', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.add('first');
    await q.lease({ count: 1 }); // marks it
    await q.add('urgent', { priority: 5 });
    await q.add('plain 1');
    await q.add('plain 2');
    await obs.hset(q.keys.byName.meta, 'np', '1'); // what an add of an older version leaves
    expect((await q.lease({ count: 1 }))[0]!.job.data).toBe('plain 1'); // the mark is trusted
    await q.sweep();
    expect((await q.lease({ count: 1 }))[0]!.job.data).toBe('urgent');
  });
});

describe('delays', () => {
  test('delayMs: not leased before due, leased after', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('later', { delayMs: 1000 });
    const info = await q.getJob(id);
    expect(info!.state).toBe('delayed');
    expect(await q.lease()).toEqual([]);
    await untilRedisTime(obs, info!.runAt! - 700, 'some of the delay to pass');
    expect(await q.lease()).toEqual([]);
    await untilRedisTime(obs, info!.runAt!, 'the job to be due');
    const [l] = await q.lease();
    expect(l?.job.id).toBe(id);
  });

  test('runAt (epoch ms and Date): not leased before due, leased after', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const now = await redisNow(obs);
    const a = await q.add('num', { runAt: now + 1000 });
    const b = await q.add('date', { runAt: new Date(now + 1000) });
    expect((await q.getJob(a.id))!).toMatchObject({ state: 'delayed', runAt: now + 1000 });
    expect((await q.getJob(b.id))!).toMatchObject({ state: 'delayed', runAt: now + 1000 });
    expect(await q.lease({ count: 2 })).toEqual([]);
    await untilRedisTime(obs, now + 1000, 'both to be due');
    expect((await q.lease({ count: 2 })).map((l) => l.job.data).sort()).toEqual(['date', 'num']);
  });

  test('runAt in the past is leasable at once', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('past', { runAt: (await redisNow(obs)) - 60_000 });
    const [l] = await q.lease();
    expect(l?.job.id).toBe(id);
  });

  test('delayMs 0 is immediate', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('now', { delayMs: 0 });
    expect((await q.getJob(id))!.state).toBe('pending');
    expect((await q.lease())[0]?.job.id).toBe(id);
  });

  test('delayed jobs come due in due-time order', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    // due times fixed by the Redis clock, so slow adds cannot swap them
    const now = await redisNow(obs);
    await q.add('c', { runAt: now + 600 });
    await q.add('a', { runAt: now + 200 });
    await q.add('b', { runAt: now + 400 });
    await untilRedisTime(obs, now + 600, 'all three to be due');
    expect((await q.lease({ count: 3 })).map((l) => l.job.data)).toEqual(['a', 'b', 'c']);
  });
});

describe('lease', () => {
  test('count: leases up to count distinct jobs, FIFO', async () => {
    const q = res.queue<number>();
    await q.addBulk([0, 1, 2, 3, 4].map((data) => ({ data })));
    const first = await q.lease({ count: 3 });
    expect(first.map((l) => l.job.data)).toEqual([0, 1, 2]);
    const rest = await q.lease({ count: 10 });
    expect(rest.map((l) => l.job.data)).toEqual([3, 4]);
    expect(new Set([...first, ...rest].map((l) => l.token)).size).toBe(5);
    expect(await q.lease({ count: 10 })).toEqual([]);
    expect((await q.counts()).working).toBe(5);
  });

  test('a lease carries the job (id, name, data, attempt, timestamps), a token and a deadline', async () => {
    const q = res.queue<{ x: number }>();
    const obs = res.client();
    const t0 = await redisNow(obs);
    const { id } = await q.add({ x: 1 }, { name: 'mail', attempts: 4, priority: 2 });
    const [l] = await q.lease({ leaseMs: 1000 });
    const t1 = await redisNow(obs);
    expect(l!.job).toMatchObject({ id, name: 'mail', data: { x: 1 }, attempt: 1, maxAttempts: 4, priority: 2, requeues: 0 });
    expect(typeof l!.token).toBe('string');
    expect(l!.token.length).toBeGreaterThan(0);
    expect(l!.job.leasedAt).toBeGreaterThanOrEqual(t0);
    expect(l!.job.leasedAt).toBeLessThanOrEqual(t1);
    expect(l!.deadline).toBe(l!.job.leasedAt + 1000);
    expect(l!.job.createdAt).toBeGreaterThanOrEqual(t0);
    expect(l!.job.createdAt).toBeLessThanOrEqual(t1);
    expect((await q.getJob(id))!.leaseDeadline).toBe(l!.deadline);
  });

  test("per-job leaseMs overrides the lease call's leaseMs (both directions)", async () => {
    const q = res.queue<string>();
    await q.add('long', { leaseMs: 5000 });
    await q.add('short', { leaseMs: 150 });
    const [long, short] = await q.lease({ count: 2, leaseMs: 1000 });
    expect(long!.job.data).toBe('long');
    expect(long!.deadline - long!.job.leasedAt).toBe(5000);
    expect(long!.job.policy.leaseMs).toBe(5000);
    expect(short!.deadline - short!.job.leasedAt).toBe(150);
    await untilRedisTime(res.client(), short!.deadline, 'the short lease to run out');
    const swept = await q.sweep();
    expect(swept.stalled).toBe(1);
    expect((await q.getJob(long!.job.id))!.state).toBe('working');
    expect((await q.getJob(short!.job.id))!.state).toBe('pending');
  });

  test('meta-like keys in the data or in a string of the meta do not change the lease length', async () => {
    const q = res.queue<Record<string, unknown>>();
    // The scripts read per-job fields from the record without decoding it: only a top-level
    // meta key may count, not the same text in the data or inside the job's name.
    await q.add({ l: 60_000, f: 5, o: 1 }, { name: 'x,"l":70000' });
    await q.add({ nested: { l: 80_000 } }, { leaseMs: 400, name: '{"l":90000' });
    const [a, b] = await q.lease({ count: 2, leaseMs: 1000 });
    expect(a!.job.data).toEqual({ l: 60_000, f: 5, o: 1 });
    expect(a!.deadline - a!.job.leasedAt).toBe(1000);
    expect(a!.job.attempt).toBe(1);
    expect(b!.deadline - b!.job.leasedAt).toBe(400);
  });

  test('queue defaults.leaseMs applies to jobs without their own', async () => {
    const q = res.queue<string>('q', { defaults: { leaseMs: 2500 } });
    await q.add('x');
    const [l] = await q.lease({ leaseMs: 100 });
    expect(l!.deadline - l!.job.leasedAt).toBe(2500);
  });
});

describe('concurrent leasers', () => {
  test('8 Queue instances (8 connections) leasing and acking 1,000 jobs: each job delivered exactly once', async () => {
    const q = res.queue<number>('drain');
    const n = 1000;
    await q.addBulk(Array.from({ length: n }, (_, data) => ({ data })));
    const seen = new Map<number, number>();
    const leasers = Array.from({ length: 8 }, () => res.twin<number>(q));
    await Promise.all(
      leasers.map(async (l) => {
        for (;;) {
          const leases = await l.lease({ count: 16, leaseMs: 10_000 });
          if (leases.length === 0) return;
          for (const x of leases) seen.set(x.job.data, (seen.get(x.job.data) ?? 0) + 1);
          expect((await l.ackBatch(leases)).every(Boolean)).toBe(true);
        }
      }),
    );
    expect(seen.size).toBe(n);
    expect([...seen.values()].every((c) => c === 1)).toBe(true);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: n });
  });
});

describe('blocking lease', () => {
  test('returns [] at once with blockMs 0 (default) on an empty queue', async () => {
    const q = res.queue();
    await q.counts(); // connected, script loaded
    const t = Date.now();
    expect(await q.lease()).toEqual([]);
    expect(Date.now() - t).toBeLessThan(1000); // one call, no wait
  });

  test('wakes at once when a job is added from another connection', async () => {
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const obs = res.client();
    await producer.client.ping();
    let settled = false;
    const pending = q.lease({ blockMs: 15_000 }).finally(() => (settled = true));
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the lease blocked on Redis', 10_000);
    expect(settled).toBe(false);
    const t = Date.now();
    const { id } = await producer.add('hello');
    const leases = await pending;
    expect(leases.map((l) => l.job.id)).toEqual([id]);
    expect(Date.now() - t).toBeLessThan(5000); // woken by the add, not at the end of its 15 s block
  });

  test('wakes when a delayed job comes due, without polling', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const { id } = await q.add('due-soon', { delayMs: 1500 });
    const due = (await q.getJob(id))!.runAt!; // script loaded on this socket
    const before = await commandStats(obs);
    const leases = await q.lease({ blockMs: 15_000 });
    const d = statsDelta(before, await commandStats(obs));
    expect(leases.map((l) => l.job.data)).toEqual(['due-soon']);
    // leased (Redis time) once due, and soon after: the wait ended at the due time, not at blockMs
    expect(leases[0]!.job.leasedAt).toBeGreaterThanOrEqual(due);
    expect(leases[0]!.job.leasedAt - due).toBeLessThan(3000);
    expect(engineCalls(d)).toBeLessThanOrEqual(6);
  });

  test('a delayed job added during the wait shortens it', async () => {
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const obs = res.client();
    await producer.client.ping();
    const pending = q.lease({ blockMs: 15_000 });
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the lease blocked on Redis', 10_000);
    const due = (await redisNow(obs)) + 400; // or a little later
    await producer.add('soon', { delayMs: 400 });
    const leases = await pending;
    expect(leases.map((l) => l.job.data)).toEqual(['soon']);
    // leased (Redis time) once due, and soon after: not at the end of the 15 s block
    expect(leases[0]!.job.leasedAt).toBeGreaterThanOrEqual(due);
    expect(leases[0]!.job.leasedAt - due).toBeLessThan(3000);
  });

  test('returns [] after blockMs when nothing comes, with only a handful of calls during a 2 s wait', async () => {
    const q = res.queue();
    const obs = res.client();
    await q.counts();
    const before = await commandStats(obs);
    const t = Date.now();
    const leases = await q.lease({ blockMs: 2000 });
    const took = Date.now() - t;
    const d = statsDelta(before, await commandStats(obs));
    expect(leases).toEqual([]);
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(3000);
    expect(engineCalls(d)).toBeLessThanOrEqual(4);
  });

  test('two blocked leasers, two jobs: each gets one', async () => {
    const q = res.queue<string>();
    const a = res.twin<string>(q);
    const b = res.twin<string>(q);
    await Promise.all([a.client.ping(), b.client.ping()]);
    const obs = res.client();
    const pa = a.lease({ blockMs: 15_000 });
    const pb = b.lease({ blockMs: 15_000 });
    await waitUntil(async () => (await blockedClients(obs)) === 2, 'both leases blocked on Redis', 10_000);
    const t = Date.now();
    await q.add('one');
    await q.add('two');
    const [la, lb] = await Promise.all([pa, pb]);
    expect(Date.now() - t).toBeLessThan(5000); // woken by the adds, not at the end of their 15 s block
    expect([...la, ...lb].map((l) => l.job.data).sort()).toEqual(['one', 'two']);
  });

  test('five blocked leasers and a burst of five jobs in one add: every leaser wakes and gets one', async () => {
    const q = res.queue<number>();
    const leasers = Array.from({ length: 5 }, () => res.twin<number>(q));
    await Promise.all(leasers.map((l) => l.client.ping()));
    const obs = res.client();
    const pending = leasers.map((l) => l.lease({ blockMs: 15_000 }));
    await waitUntil(async () => (await blockedClients(obs)) === 5, 'five leases blocked on Redis', 10_000);
    const t = Date.now();
    await q.addBulk([1, 2, 3, 4, 5].map((data) => ({ data })));
    const got = await Promise.all(pending);
    expect(Date.now() - t).toBeLessThan(5000); // woken by the add, not at the end of their 15 s block
    expect(got.map((ls) => ls.length)).toEqual([1, 1, 1, 1, 1]);
    expect(got.flat().map((l) => l.job.data).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  test('a burst added to a queue with one blocked leaser of count 1 leaves the rest pending', async () => {
    const q = res.queue<number>();
    const obs = res.client();
    const pending = q.lease({ blockMs: 3000 });
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the lease blocked on Redis', 10_000);
    await res.twin<number>(q).addBulk([1, 2, 3].map((data) => ({ data })));
    expect((await pending).map((l) => l.job.data)).toEqual([1]);
    expect((await q.counts()).pending).toBe(2);
  });
});
