import { Redis } from 'ioredis';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { Queue, Worker } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { blockedPopIds } from '../support/redis.js';
import { sleep, waitUntil } from '../support/wait.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(() => cluster?.stop());

// Many names, so the queues land on every master: a key outside the queue's slot
// would fail only on some of them.
const NAMES = Array.from({ length: 24 }, (_, i) => `cq-${i}-${'x'.repeat(i % 5)}`);

// A Cluster client lists its seed nodes' first connections until it has read the slots, and
// then closes them: a first call that loaded the library through them failed (counts,
// queueState, settings) with "Connection is closed".
test.each([['counts'], ['queueState'], ['setGlobalConcurrency'], ['add']] as const)('a Cluster client still connecting: a first call of %s works', async (call) => {
  const client = cluster.client();
  expect(client.status).not.toBe('ready');
  const q = new Queue<{ n: number }>(`fresh-${call}`, { connection: client });
  try {
    if (call === 'counts') expect((await q.counts()).pending).toBe(0);
    if (call === 'queueState') expect((await q.queueState()).closed).toBe(false);
    if (call === 'setGlobalConcurrency') await q.setGlobalConcurrency(2);
    if (call === 'add') expect((await q.add({ n: 1 })).created).toBe(true);
  } finally {
    await q.deleteQueue();
    await q.close();
  }
});

test('queues with many names span every master', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  // 16384 slots in 3 ranges of ~5461: all three ranges must be hit.
  const ranges = new Set(slots.map((s) => Math.floor(s / 5462)));
  expect(ranges.size).toBe(3);
});

test('every operation works on a Redis Cluster, for queues on every master', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    const q = new Queue<{ n: number }, number>(name, { connection: client });
    const a = await q.add({ n: 1 }, { jobId: `${name}-a` });
    expect(a.created).toBe(true);
    expect((await q.add({ n: 1 }, { jobId: `${name}-a` })).created).toBe(false);
    const bulk = await q.addBulk([{ data: { n: 2 } }, { data: { n: 3 }, opts: { priority: 5 } }, { data: { n: 4 }, opts: { delayMs: 250 } }]);
    const leases = await q.lease({ count: 10, leaseMs: 200 });
    expect(leases.map((l) => l.job.data.n)).toEqual([3, 1, 2]);
    expect(await q.touch(leases[0]!, 500)).toBe(true);
    expect(await q.ack(leases[0]!, 3)).toBe(true);
    expect(await q.nack(leases[1]!, { error: 'x', delayMs: 0 })).toBe(true);
    expect(await q.reject(leases[2]!, 'bad')).toBe(true);
    await untilTime(client, (await q.getJob(bulk[2]!.id))!.runAt!, 'the delayed job to be due');
    const more = await q.lease({ count: 10, leaseMs: 50, blockMs: 200 });
    expect(more.map((l) => l.job.data.n).sort()).toEqual([1, 4]);
    await untilTime(client, Math.max(...more.map((l) => l.deadline)), 'the short leases to run out');
    expect((await q.sweep()).stalled).toBe(2);
    expect(await q.counts()).toMatchObject({ pending: 2, completed: 1, dead: 1 });
    expect((await q.getJob(leases[0]!.job.id))?.result).toBe(3);
    expect((await q.listDead()).map((d) => d.data.n)).toEqual([2]);
    expect(await q.retryDead({ limit: 10 })).toHaveLength(1);
    expect(await q.retry(leases[0]!.job.id)).toBe('completed');
    expect(await q.getJob(leases[0]!.job.id)).toMatchObject({ state: 'pending', retries: 1 });
    await q.pause();
    expect(await q.lease()).toEqual([]);
    await q.resume();
    await q.close();
  }
  expect(client.status).toBe('ready'); // a client passed in stays open
}, 60_000); // 24 queues, each waiting out a delay and a lease

/** Waits until the cluster's clock (TIME of some node; all run on this machine) is past `ms`. */
async function untilTime(client: ReturnType<TestCluster['client']>, ms: number, what: string): Promise<void> {
  await waitUntil(
    async () => {
      const [s, us] = (await client.call('TIME')) as [string, string];
      return Number(s) * 1000 + Math.floor(Number(us) / 1000) > ms;
    },
    what,
    10_000,
  );
}

/** The events subscription is live once a probe job's 'added' event comes through it. */
async function subscribed(q: Queue<{ n: number }, number>): Promise<void> {
  const added = firstValueFrom(q.events().pipe(filter((e) => e.type === 'added' && e.id === 'probe')));
  let got = false;
  void added.then(() => (got = true));
  for (let i = 0; i < 100 && !got; i++) {
    await q.add({ n: 0 }, { jobId: 'probe', keepCompletedMs: 0, dedupWindowMs: 0 });
    await Promise.race([added, new Promise((r) => setTimeout(r, 100))]);
    if (!got) {
      // not seen yet: take the probe out again so the next add publishes 'added' anew
      const [l] = await q.lease();
      if (l) await q.ack(l);
    }
  }
  const [l] = await q.lease();
  if (l) await q.ack(l);
}

test('a worker, events and waitForResult on a cluster', async () => {
  const client = cluster.client();
  for (const name of NAMES.slice(0, 6)) {
    const q = new Queue<{ n: number }, number>(`w-${name}`, { connection: client });
    const seen = firstValueFrom(
      q.events().pipe(
        filter((e) => e.type === 'completed' && e.id !== 'probe'),
        take(3),
        toArray(),
      ),
    );
    await subscribed(q);
    const worker = new Worker(q, async (job) => job.data.n * 2, { concurrency: 4, blockMs: 200 });
    const ids = await Promise.all([1, 2, 3].map(async (n) => (await q.add({ n })).id));
    await expect(q.waitForResult(ids[2]!, { timeoutMs: 5000 })).resolves.toBe(6);
    expect((await seen).map((e) => e.id).sort()).toEqual([...ids].sort());
    await worker.close();
    await q.close();
  }
});

test('bounded, grouped and stats queues work on a cluster (their derived keys share the slot)', async () => {
  const client = cluster.client();
  for (const name of NAMES.slice(0, 9)) {
    const q = new Queue<{ n: number }, number>(`b-${name}`, {
      connection: client,
      bound: 3,
      stats: true,
      groupConcurrency: 1,
      checkClosed: true,
    });
    await q.add({ n: 1 }, { group: 'a' });
    await q.add({ n: 2 }, { group: 'a' });
    await q.add({ n: 3 }, { group: 'b' });
    await expect(q.tryAdd({ n: 4 })).rejects.toThrow(/full/i);
    const leases = await q.lease({ count: 3 });
    // one per group at a time
    expect(leases.map((l) => l.job.data.n).sort()).toEqual([1, 3]);
    expect(await q.ackBatch(leases)).toEqual([true, true]);
    expect((await q.stats()).produced).toMatchObject({ messages: 3 });
    await q.closeQueue();
    await expect(q.add({ n: 5 })).rejects.toThrow(/closed/i);
    await q.deleteQueue();
    await q.close();
  }
});

test('the queue-wide concurrency and group overrides on a cluster, for queues on every master (their keys share the slot)', async () => {
  const client = cluster.client();
  for (const name of NAMES.slice(0, 9)) {
    const q = new Queue<{ g: string }>(`gc-${name}`, { connection: client, globalConcurrency: 3, groupConcurrency: 1 });
    await q.setGroupOverride('vip', { concurrency: 2, limiter: { max: 5, durationMs: 60_000 } });
    await q.addBulk([...Array.from({ length: 4 }, () => ({ data: { g: 'vip' }, opts: { group: 'vip' } })), { data: { g: 'std' }, opts: { group: 'std' } }, { data: { g: 'std' }, opts: { group: 'std' } }]);
    const first = await q.lease({ count: 10 });
    expect(first.map((l) => l.job.group).sort()).toEqual(['std', 'vip', 'vip']); // 3 at once: vip 2, std 1
    expect(await q.lease({ count: 10 })).toHaveLength(0);
    await q.setGlobalConcurrency(5);
    expect((await q.lease({ count: 10 })).map((l) => l.job.group)).toEqual([]); // each group at its own limit
    await q.setGroupOverride('vip', { concurrency: 4 });
    expect((await q.lease({ count: 10 })).map((l) => l.job.group)).toEqual(['vip', 'vip']);
    expect(await q.queueState()).toMatchObject({ globalConcurrency: 5, groupOverrides: { vip: { concurrency: 4 } } });
    await q.deleteQueue();
    await q.close();
  }
});

test('retention by count and age on a cluster, for queues on every master (the dead jobs\' retention index shares the slot)', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    const q = new Queue<{ n: number }, number>(`${name}-keep`, {
      connection: client,
      defaults: { attempts: 1, keepCompleted: { count: 1 }, keepDead: { count: 2, ageMs: 100 } },
    });
    await q.addBulk([1, 2, 3, 4, 5].map((n) => ({ data: { n } })));
    const leases = await q.lease({ count: 5 });
    expect(await q.ackBatch(leases.slice(0, 2))).toEqual([true, true]);
    for (const l of leases.slice(2)) expect(await q.nack(l, { error: 'x' })).toBe(true);
    expect(await q.counts()).toMatchObject({ completed: 1, dead: 2 });
    const diedAt = Math.max(...(await q.listDead()).map((d) => d.diedAt));
    await untilTime(client, diedAt + 100, 'the dead jobs past their retention');
    expect(await q.sweep()).toMatchObject({ deadRemoved: 2 });
    expect(await q.counts()).toMatchObject({ completed: 1, dead: 0 });
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('deduplication ids on a cluster, for queues on every master (their keys share the slot)', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    const q = new Queue<string>(`${name}-dedup`, { connection: client });
    const a = await q.add('a', { deduplication: { id: 'u', keepLastIfActive: true } });
    expect(await q.add('b', { deduplication: { id: 'u' } })).toEqual({ id: a.id, created: false, deduplicated: 'ignored' });
    const d = await q.add('d1', { delayMs: 60_000, deduplication: { id: 'd', mode: 'debounce' } });
    expect((await q.add('d2', { delayMs: 60_000, deduplication: { id: 'd', mode: 'debounce' } })).deduplicated).toBe('replaced');
    expect((await q.getJob(d.id))!.data).toBe('d2');
    const t = await q.add('t', { deduplication: { id: 't', ttlMs: 60_000 } });
    expect(await q.getDeduplicationJobId('t')).toBe(t.id);
    const [l] = await q.lease({ count: 1 });
    expect(l!.job.id).toBe(a.id);
    expect((await q.add('c', { deduplication: { id: 'u', keepLastIfActive: true } })).deduplicated).toBe('deferred');
    expect(await q.ack(l!)).toBe(true); // the kept add becomes a job, holding the id
    const next = await q.getDeduplicationJobId('u');
    expect((await q.getJob(next!))!.data).toBe('c');
    expect(await q.removeDeduplicationKey('t')).toBe(true);
    await q.sweep();
    expect(await q.drain()).toBe(3);
    expect(await q.getDeduplicationJobId('u')).toBeNull();
    await q.deleteQueue();
    await q.close();
  }
});

test('progress and log lines on a cluster, for queues on every master (their keys share the slot)', async () => {
  const client = cluster.client();
  for (const name of NAMES) {
    const q = new Queue<number>(`${name}-progress`, { connection: client, maxLogLines: 2 });
    const { id } = await q.add(1);
    const [l] = await q.lease();
    expect(await q.updateProgress(l!, { pct: 40 })).toBe(true);
    for (const line of ['a', 'b', 'c']) expect(await q.log(l!, line)).toBe(true);
    expect(await q.getJob(id)).toMatchObject({ progress: { pct: 40 }, logs: ['b', 'c'] });
    expect(await q.ack(l!)).toBe(true);
    expect(await q.updateProgress(l!, 100)).toBe(false);
    await q.deleteQueue();
    await q.close();
  }
});

test('rate limits on a cluster: the queue and group windows and a hold live in the queue slot', async () => {
  const client = cluster.client();
  for (const name of NAMES.slice(0, 9)) {
    const q = new Queue<string>(`${name}-limited`, { connection: client, limiter: { max: 2, durationMs: 60_000 }, groupLimiter: { max: 1, durationMs: 60_000 } });
    await q.addBulk([{ data: 'a1', opts: { group: 'a' } }, { data: 'a2', opts: { group: 'a' } }, { data: 'b1', opts: { group: 'b' } }, { data: 'p' }]);
    const leased = await q.lease({ count: 10 });
    expect(leased.map((l) => l.job.data).sort()).toEqual(['a1', 'b1']);
    expect(await q.counts()).toMatchObject({ rateLimitedGroups: 1 }); // a (b has no job left)
    expect((await q.counts()).rateLimitedMs).toBeGreaterThan(0);
    expect(await q.rateLimit(leased[0]!, 1000)).toBe(true);
    await q.deleteQueue();
    await q.close();
  }
});

test('a job timeout on a cluster: the attempt fails with a TimeoutError and the retry completes it', async () => {
  const client = cluster.client();
  for (const name of NAMES.slice(0, 6)) {
    const q = new Queue<string, string>(`${name}-timeouts`, { connection: client, defaults: { timeoutMs: 150 } });
    const w = new Worker<string, string>(q, async (job) => {
      if (job.attempt === 1) await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason)));
      return `attempt ${job.attempt}`;
    });
    try {
      const { id } = await q.add('x', { attempts: 2, backoff: 0 });
      expect(await q.waitForResult(id, { timeoutMs: 10_000 })).toBe('attempt 2');
      expect((await q.getJob(id))!.lastError).toMatch(/timed out after 150 ms/);
    } finally {
      await w.close();
      await q.deleteQueue();
      await q.close();
    }
  }
});

test('a blocking wait cut off with its node connection is not sent again later: every add after it wakes the worker', async () => {
  const client = cluster.client();
  const q = new Queue<number, number>('cut-wait', { connection: client });
  // an add must wake the worker, not the end of its 10 s block (nor its 30 s safety lease)
  const w = new Worker(q, async (job) => job.data, { blockMs: 10_000 });
  const node = await cluster.masterOfSlot(Number(await client.call('CLUSTER', 'KEYSLOT', '{relq:cut-wait}')));
  const admin = new Redis({ host: node.host, port: node.port });
  try {
    expect(await q.waitForResult((await q.add(0)).id, { timeoutMs: 10_000 })).toBe(0);
    await waitUntil(async () => (await blockedPopIds(admin)).length === 1, 'the worker blocked on the queue node');
    await admin.client('KILL', 'ID', (await blockedPopIds(admin))[0]!);
    await waitUntil(async () => (await blockedPopIds(admin)).length === 1, 'the worker blocked again');
    // time for ioredis to send the BLPOP it lost again (after its 100 ms failover delay and a slot
    // refresh), had relq let it: queued behind the worker's new one, it would take a later token
    await sleep(1000);
    const took: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const t0 = Date.now();
      expect(await q.waitForResult((await q.add(i)).id, { timeoutMs: 40_000 })).toBe(i);
      took.push(Date.now() - t0);
    }
    for (const t of took) expect(t).toBeLessThan(5000);
  } finally {
    await w.close();
    await q.deleteQueue();
    await q.close();
    admin.disconnect();
  }
}, 150_000);
