/**
 * Replies lost in flight. A TCP proxy swallows Redis's reply after the command ran there and
 * resets the connection; ioredis reconnects and resends the command, which runs a second
 * time. A replayed settle answers what its first run answered, so the caller never sees the
 * lost reply: acks stay true, and a worker reports no lost lease for a job that completed.
 * Half-open connections (nothing forwarded, nothing closed) are replaced, and work resumes.
 */
import { Queue, Worker, type WorkerEvent } from '../../lib/index.js';
import { startProxy, type FaultProxy } from '../support/proxy.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const until = (cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) => waitUntil(cond, what, timeoutMs, 20);

let redis: TestRedis;
let proxy: FaultProxy;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  redis = await startRedis({ controllable: true });
  proxy = await startProxy(redis);
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  proxy.setLatency(0);
  proxy.resetAll();
});
afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
});

function queues(): { viaProxy: Queue<number, string>; direct: Queue<number, string> } {
  const prefix = uniquePrefix();
  const viaProxy = new Queue<number, string>('replies', { connection: proxy.url, prefix });
  const direct = new Queue<number, string>('replies', { connection: redis.url, prefix });
  closers.push(() => viaProxy.close(), () => direct.close());
  return { viaProxy, direct };
}

test('ack, nack, requeue, reject and a step moved to the delayed set whose reply was lost still answer true, and run once', async () => {
  const { viaProxy, direct } = queues();
  await direct.addBulk([1, 2, 3, 4, 5, 6].map((data) => ({ data, opts: { attempts: 5 } })));
  const [a, n, q, r, b, d] = await direct.lease({ count: 6 });
  await viaProxy.counts(); // connected, scripts loaded

  const lost = async <T>(call: () => Promise<T>): Promise<T> => {
    const before = proxy.dropped;
    await new Promise((r) => setTimeout(r, 250)); // past the proxy's handshake grace
    proxy.dropReplies(1);
    const out = await call();
    expect(proxy.dropped).toBe(before + 1); // the reply really was swallowed
    return out;
  };
  expect(await lost(() => viaProxy.ack(a!, 'done'))).toBe(true);
  expect(await lost(() => viaProxy.nack(n!, { error: 'boom', delayMs: 0 }))).toBe(true);
  expect(await lost(() => viaProxy.requeue(q!))).toBe(true);
  expect(await lost(() => viaProxy.reject(r!, 'no'))).toBe(true);
  expect(await lost(() => viaProxy.ackBatch([b!]))).toEqual([true]);
  expect(await lost(() => viaProxy.snooze(d!, 60_000))).toBe(true);

  expect(await direct.getJob(a!.job.id)).toMatchObject({ state: 'completed', result: 'done' });
  expect(await direct.getJob(n!.job.id)).toMatchObject({ state: 'pending', failures: 1 });
  expect(await direct.getJob(q!.job.id)).toMatchObject({ state: 'pending', requeues: 1, failures: 0 });
  expect(await direct.getJob(r!.job.id)).toMatchObject({ state: 'dead' });
  expect(await direct.getJob(d!.job.id)).toMatchObject({ state: 'delayed', requeues: 1, failures: 0 });
  expect(await direct.counts()).toMatchObject({ pending: 2, working: 0, delayed: 1, completed: 2, dead: 1 });
  // the fence still holds: a second, new ack of a settled lease is refused
  expect(await viaProxy.ack(a!)).toBe(false);
});

test("cancel whose reply was lost answers as its first run: a retried job is not removed by the replay", async () => {
  const { viaProxy, direct } = queues();
  await direct.add(1, { jobId: 'running', attempts: 3, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  await direct.add(2, { jobId: 'waiting' });
  const [lease] = await direct.lease();
  await viaProxy.counts(); // connected, scripts loaded
  await new Promise((r) => setTimeout(r, 250)); // past the proxy's handshake grace
  const before = proxy.dropped;
  proxy.dropReplies(1);
  // run once, its reply lost, run again: the second run finds the job pending, which it would remove
  expect(await viaProxy.cancel('running', { outcome: 'retry' })).toBe('retried');
  expect(proxy.dropped).toBe(before + 1);
  expect(await direct.getJob('running')).toMatchObject({ state: 'pending', failures: 1 });
  expect(await direct.ack(lease!)).toBe(false);
  await new Promise((r) => setTimeout(r, 250));
  proxy.dropReplies(1);
  expect(await viaProxy.cancel('waiting')).toBe('removed'); // not false: the replay answers as the first run
  expect(proxy.dropped).toBe(before + 2);
  expect(await direct.counts()).toMatchObject({ pending: 1, working: 0, dead: 0 });
});

test('a worker whose replies keep getting lost completes every job once and reports no lost lease', async () => {
  const { viaProxy, direct } = queues();
  const events: Array<WorkerEvent<number, string>> = [];
  const w = new Worker(
    viaProxy,
    async (job) => {
      await new Promise((r) => setTimeout(r, 2));
      return `done ${job.data}`;
    },
    { concurrency: 4, blockMs: 500 },
  );
  closers.push(() => w.close({ drainTimeoutMs: 1000 }));
  w.events.subscribe((e) => events.push(e));
  // one lost reply at a time, while jobs keep coming, until 12 replies were lost
  const chaos = setInterval(() => proxy.dropsArmed === 0 && proxy.dropReplies(1), 30);
  let added = 0;
  try {
    while (proxy.dropped < 12) {
      await direct.addBulk(Array.from({ length: 20 }, () => ({ data: added++ })));
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    clearInterval(chaos);
  }
  const completedEvents = () => events.filter((e) => e.type === 'completed').map((e) => (e as { job: { data: number } }).job.data);
  await until(async () => (await direct.counts()).completed === added, `${added} jobs completed`, 60_000);
  // The worker reports a completion once the ack's answer is back, a moment after Redis counts it.
  await until(() => completedEvents().length >= added, `${added} completed events`, 10_000);
  const completed = completedEvents();
  expect(events.filter((e) => e.type === 'lost')).toEqual([]);
  expect(new Set(completed).size).toBe(added);
  expect(completed.length).toBe(added);
  expect(await direct.counts()).toMatchObject({ pending: 0, working: 0, completed: added, dead: 0 });
}, 90_000);

test('half-open connections are replaced: a frozen worker connection resumes within seconds', async () => {
  const { viaProxy, direct } = queues();
  const done = new Set<number>();
  const w = new Worker(viaProxy, async (job) => void done.add(job.data), { concurrency: 2, blockMs: 1000 });
  closers.push(() => w.close({ drainTimeoutMs: 0 }));
  await direct.add(0);
  await until(() => done.has(0), 'the first job');
  proxy.freezeAll(); // every connection of the worker goes silent, none is closed
  const frozenAt = Date.now();
  await direct.addBulk([1, 2, 3].map((data) => ({ data })));
  await until(() => done.size === 4, 'the jobs added after the freeze', 30_000);
  // socket timeout (5 s) or the blocking watchdog (blockMs + 3 s) replaced the connections
  expect(Date.now() - frozenAt).toBeLessThan(15_000);
});
