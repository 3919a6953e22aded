/**
 * The queue-wide concurrency (`globalConcurrency`, setGlobalConcurrency) and per-group
 * overrides of groupConcurrency / groupLimiter (groupOverrides, setGroupOverride), one process:
 * what a lease takes, the wake-ups of workers blocked at the limit, validation before any
 * write, and the keys a deleted queue leaves.
 */
import { QueueDeletedError, ValidationError, Worker } from '../../lib/index.js';
import { useRedis, scanKeys, sleep, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

type G = { g: string; i: number };

describe('globalConcurrency', () => {
  test("stored by a Queue object's first lease: all its leases and every other object's count", async () => {
    const q = res.queue<number>('gc1', { globalConcurrency: 3 });
    const other = res.twin<number>(q);
    await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ data: i })));
    const first = await q.lease({ count: 10 });
    expect(first).toHaveLength(3);
    expect(await other.getGlobalConcurrency()).toBe(3);
    expect((await other.queueState()).globalConcurrency).toBe(3);
    expect(await other.lease({ count: 5 })).toHaveLength(0);
    await q.ack(first[0]!);
    expect(await other.lease({ count: 5 })).toHaveLength(1);
    expect(await q.counts()).toMatchObject({ pending: 6, working: 3 });
  });

  test('changed at run time: raised, lowered (held leases run on), removed', async () => {
    const q = res.queue<number>('gc2');
    await q.setGlobalConcurrency(2);
    await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ data: i })));
    const held = await q.lease({ count: 10 });
    expect(held).toHaveLength(2);
    await q.setGlobalConcurrency(5);
    held.push(...(await q.lease({ count: 10 })));
    expect(held).toHaveLength(5);
    await q.setGlobalConcurrency(1);
    expect(await q.lease({ count: 10 })).toHaveLength(0);
    for (const l of held.splice(0, 4)) expect(await q.ack(l)).toBe(true); // one still held: at the limit
    expect(await q.lease({ count: 10 })).toHaveLength(0);
    expect(await q.ack(held.pop()!)).toBe(true);
    expect(await q.lease({ count: 10 })).toHaveLength(1);
    await q.setGlobalConcurrency(0);
    expect(await q.getGlobalConcurrency()).toBe(0);
    expect(await q.lease({ count: 10 })).toHaveLength(4);
  });

  test('a Worker of 5 slots runs at most the limit at once, and reaches it', async () => {
    const q = res.queue<number>('gc3', { globalConcurrency: 2 });
    let running = 0;
    let most = 0;
    let done = 0;
    res.worker(
      new Worker(
        q,
        async () => {
          most = Math.max(most, ++running);
          await sleep(30);
          running -= 1;
          done += 1;
        },
        { concurrency: 5 },
      ),
    );
    await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ data: i })));
    await waitUntil(() => done === 20, '20 jobs done', 20_000);
    expect(most).toBe(2);
  });

  test('a worker blocked at the limit is woken when a lease ends, and when the limit is raised', async () => {
    const q = res.queue<number>('gc4');
    await q.setGlobalConcurrency(1);
    await q.addBulk([{ data: 1 }, { data: 2 }, { data: 3 }]);
    const [held] = await q.lease();
    const started: number[] = [];
    const gate = { open: false };
    res.worker(
      new Worker(
        res.twin<number>(q),
        async (job) => {
          started.push(job.data);
          await waitUntil(() => gate.open, 'gate', 30_000);
        },
        { concurrency: 2, blockMs: 30_000 }, // a wait that only a wake-up ends in time
      ),
    );
    await sleep(300);
    expect(started).toEqual([]); // at the limit
    await q.ack(held!);
    await waitUntil(() => started.length === 1, 'the blocked worker to start a job after the ack', 5000);
    await sleep(200);
    expect(started).toHaveLength(1);
    await q.setGlobalConcurrency(2);
    await waitUntil(() => started.length === 2, 'the blocked worker to start one more once the limit is raised', 5000);
    gate.open = true;
    await waitUntil(async () => (await q.counts()).completed === 3, 'all three completed', 5000);
  });

  test('bad values are refused with a ValidationError before anything is written', async () => {
    const obs = res.client();
    const q = res.queue<number>('gc5');
    for (const bad of [-1, 1.5, '3', Number.NaN, 2 ** 32]) {
      await expect(q.setGlobalConcurrency(bad as number)).rejects.toBeInstanceOf(ValidationError);
    }
    expect(() => res.queue('gc5b', { globalConcurrency: -1 })).toThrow(ValidationError);
    expect(() => res.queue('gc5c', { groupOverrides: { 'a{b}': { concurrency: 1 } } })).toThrow(ValidationError);
    expect(() => res.queue('gc5d', { groupOverrides: [] as never })).toThrow(ValidationError);
    await expect(q.setGroupOverride('', { concurrency: 1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(q.setGroupOverride('a', { concurrency: -1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(q.setGroupOverride('a', { limiter: { max: 0, durationMs: 0 } })).rejects.toThrow(/groupLimiter/);
    await expect(q.setGroupOverride('a', { weight: 2 } as never)).rejects.toThrow(/unknown option 'weight'/);
    await expect(q.setGroupOverride('a', 3 as never)).rejects.toBeInstanceOf(ValidationError);
    expect(await scanKeys(obs, `${q.prefix}*`)).toEqual([]);
  });
});

describe('group overrides', () => {
  async function leaseGroups(q: ReturnType<typeof res.queue<G>>, count = 20): Promise<Record<string, number>> {
    const by: Record<string, number> = {};
    for (const l of await q.lease({ count })) by[l.job.group!] = (by[l.job.group!] ?? 0) + 1;
    return by;
  }
  const jobs = (g: string, n: number) => Array.from({ length: n }, (_, i) => ({ data: { g, i }, opts: { group: g } }));

  test("a group's own concurrency in place of groupConcurrency, as an option and changed at run time", async () => {
    const q = res.queue<G>('go1', { groupConcurrency: 1, groupOverrides: { vip: { concurrency: 3 } } });
    await q.addBulk([...jobs('vip', 5), ...jobs('std', 5)]);
    expect(await leaseGroups(q)).toEqual({ vip: 3, std: 1 });
    expect(await q.getGroupOverrides()).toEqual({ vip: { concurrency: 3 } });
    // a group parked at its limit rejoins the rotation when its own limit is raised
    await q.setGroupOverride('std', { concurrency: 2 });
    expect(await leaseGroups(q)).toEqual({ std: 1 });
    await q.setGroupOverride('vip', null);
    expect(await q.getGroupOverrides()).toEqual({ std: { concurrency: 2 } });
    expect(await leaseGroups(q)).toEqual({}); // vip holds 3, its limit is 1 again
  });

  test("a group's own rate limit in place of groupLimiter", async () => {
    const q = res.queue<G>('go2', { groupLimiter: { max: 1, durationMs: 60_000 } });
    await q.setGroupOverride('vip', { limiter: { max: 3, durationMs: 60_000 } });
    expect(await q.getGroupOverrides()).toEqual({ vip: { limiter: { max: 3, durationMs: 60_000 } } });
    await q.addBulk([...jobs('vip', 5), ...jobs('std', 5)]);
    const by: Record<string, number> = {};
    for (let i = 0; i < 4; i++) {
      const leases = await q.lease({ count: 20 });
      for (const l of leases) by[l.job.group!] = (by[l.job.group!] ?? 0) + 1;
      await q.ackBatch(leases);
    }
    expect(by).toEqual({ vip: 3, std: 1 });
  });

  test('a deleted queue keeps none of it', async () => {
    const obs = res.client();
    const q = res.queue<G>('go3', { groupConcurrency: 1, globalConcurrency: 4 });
    await q.setGroupOverride('vip', { concurrency: 2 });
    await q.add({ g: 'vip', i: 0 }, { group: 'vip' });
    expect(await q.lease()).toHaveLength(1);
    await q.deleteQueue({ tombstoneMs: 1000 });
    await expect(q.setGroupOverride('vip', null)).rejects.toBeInstanceOf(QueueDeletedError);
    const left = (await scanKeys(obs)).filter((k) => k.startsWith(q.keys.tag) && !k.includes(':req:'));
    // only what every deleted queue leaves for a moment: the tombstone, wake-up tokens, expiring markers
    const allowed = [q.keys.byName.meta, q.keys.byName.wake, q.keys.derived.notfull, `${q.keys.tag}:role:consumer:free`, `${q.keys.tag}:role:producer:free`];
    expect(left.filter((k) => !allowed.includes(k))).toEqual([]);
    expect(await obs.exists(`${q.keys.tag}:govr`)).toBe(0);
  });
});
