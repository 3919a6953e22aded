/**
 * queue.getWorkers() in one process: what a worker's entry says and when it changes, that an
 * idle, paused or long-busy worker stays listed without a call of its own, that busy and idle
 * workers send no command more for it, and that its keys go with the sweep and deleteQueue.
 * Workers in other processes (pids, SIGKILL): multiprocess.spec.ts.
 */
import { hostname } from 'node:os';
import { BatchWorker, ValidationError, Worker } from '../../lib/index.js';
import { Gate, blockedClients, closeClient, commandStats, scanKeys, scriptCalls, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';
import { redisClient } from '../support/redis.js';
import { sleep } from '../support/wait.js';

const res = useRedis();
const TTL_MS = 2000;

/** Samples getWorkers() for `ms`: the fewest workers any sample listed. */
async function fewestListed(q: { getWorkers(): Promise<unknown[]> }, ms: number): Promise<number> {
  let fewest = Infinity;
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) fewest = Math.min(fewest, (await q.getWorkers()).length);
  return fewest;
}

test('a worker is listed with host, pid, appName, concurrency and running jobs; a concurrency change shows; close() removes it at once', async () => {
  const q = res.queue<number>('listed');
  expect(await q.getWorkers()).toEqual([]);
  const gate = new Gate();
  const w = res.worker(new Worker<number>(res.twin<number>(q), () => gate.enter(), { concurrency: 2, appName: 'billing', workerTtlMs: TTL_MS }));
  const b = res.worker(new BatchWorker<number>(res.twin<number>(q), () => undefined, { size: 5, workerTtlMs: TTL_MS }));
  await waitUntil(async () => (await q.getWorkers()).length === 2, 'both listed', 10_000);
  const both = await q.getWorkers();
  expect(both[0]!.startedAt).toBeLessThanOrEqual(both[1]!.startedAt); // oldest first
  const first = both.find((x) => x.appName === 'billing');
  const second = both.find((x) => x !== first);
  expect(first).toMatchObject({ queue: 'listed', host: hostname(), pid: process.pid, appName: 'billing', concurrency: 2, running: 0 });
  expect(second).not.toHaveProperty('appName');
  expect(second).toMatchObject({ concurrency: 1, running: 0 });
  expect(first!.id).not.toBe(second!.id);

  await q.pause(); // the batch worker takes nothing; the worker's jobs run
  w.concurrency = 5;
  await q.resume();
  await b.close();
  await q.addBulk([{ data: 1 }, { data: 2 }]);
  await waitUntil(() => gate.running === 2, 'two running');
  await waitUntil(async () => (await q.getWorkers())[0]?.concurrency === 5 && (await q.getWorkers())[0]?.running === 2, 'the new concurrency and the running jobs shown', 10_000);
  expect((await q.getWorkers()).map((x) => x.id)).toEqual([first!.id]); // the batch worker left at close()
  await gate.openUntil(2, 'both done');
  const startedAt = (await q.getWorkers())[0]!.startedAt;
  await waitUntil(async () => (await q.getWorkers())[0]!.lastSeenAt > startedAt + TTL_MS, 'seen again past a ttl', 10_000);
  expect((await q.getWorkers())[0]!.startedAt).toBe(startedAt); // kept from its first registration
  await w.close();
  expect(await q.getWorkers()).toEqual([]);
});

test('idle, paused, and busy with one long job (no lease call, no touch due): listed all along, for several ttls', async () => {
  const idle = res.queue('idle');
  res.worker(new Worker(res.twin(idle), async () => undefined, { workerTtlMs: TTL_MS, blockMs: 60_000 }));
  const paused = res.queue('paused');
  const p = res.worker(new Worker(res.twin(paused), async () => undefined, { workerTtlMs: TTL_MS }));
  void p.pause();
  const pb = res.worker(new BatchWorker(res.twin(paused), () => undefined, { size: 2, workerTtlMs: TTL_MS }));
  void pb.pause();
  const busy = res.queue('busy');
  const gate = new Gate();
  res.worker(new Worker(res.twin(busy), () => gate.enter(), { workerTtlMs: TTL_MS, leaseMs: 60_000 }));
  await busy.add(1);
  await waitUntil(() => gate.running === 1, 'the long job running');
  await waitUntil(async () => (await idle.getWorkers()).length === 1 && (await paused.getWorkers()).length === 2 && (await busy.getWorkers()).length === 1, 'all listed', 10_000);
  const [a, b, c] = await Promise.all([fewestListed(idle, 3 * TTL_MS), fewestListed(paused, 3 * TTL_MS), fewestListed(busy, 3 * TTL_MS)]);
  expect({ idle: a, paused: b, busy: c }).toEqual({ idle: 1, paused: 2, busy: 1 });
  expect((await busy.getWorkers())[0]).toMatchObject({ running: 1 });
  await gate.openUntil(1, 'the long job done');
});

test('an idle worker whose blockMs is above a fifth of its ttl stays listed by its lease calls alone: no touch call, its waits cut short', async () => {
  const q = res.queue('idle-leases');
  res.worker(new Worker(res.twin(q), async () => undefined, { workerTtlMs: TTL_MS, blockMs: 60_000 }));
  await waitUntil(async () => (await q.getWorkers()).length === 1, 'listed', 10_000);
  const mon = redisClient(res.server);
  mon.on('error', () => undefined);
  const calls: string[] = [];
  const monitor = await mon.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (/^(fcall|evalsha)$/i.test(args[0] ?? '')) calls.push(String(args[1]).replace(/^relq_[0-9a-f]+_/, ''));
    if (/^blpop$/i.test(args[0] ?? '')) calls.push('blpop');
  });
  try {
    expect(await fewestListed(q, 3 * TTL_MS)).toBe(1);
  } finally {
    monitor.disconnect();
    await closeClient(mon);
  }
  const fcalls = calls.filter((c) => c !== 'blpop' && c !== 'getWorkers');
  expect(fcalls.length).toBeGreaterThanOrEqual(2);
  expect([...new Set(fcalls)]).toEqual(['lease']);
});

test('no command more: a busy worker makes one lease call per job, an idle one (defaults) only its blocking waits', async () => {
  const N = 300;
  const q = res.queue<number>('hot');
  const obs = res.client();
  await q.addBulk(Array.from({ length: N }, (_, data) => ({ data })));
  let done = 0;
  const before = await commandStats(obs);
  res.worker(new Worker<number>(res.twin<number>(q), async () => void (done += 1)));
  await waitUntil(async () => done === N && (await blockedClients(obs)) === 1, 'all done, the worker idle', 30_000);
  const busy = statsDelta(before, await commandStats(obs));
  expect(scriptCalls(busy)).toBe(N + 1); // each call settles one job and leases the next; the last finds none
  expect(busy.zadd).toBeLessThanOrEqual(2 * (N + 1)); // the working set, then registrations every few seconds at most
  expect(await q.getWorkers()).toHaveLength(1);

  const idleFrom = await commandStats(obs);
  await sleep(6000);
  const idle = statsDelta(idleFrom, await commandStats(obs));
  delete idle.info;
  // blockMs 5 s: one wait, perhaps two; the 30 s lease that keeps it listed is not due yet
  expect(scriptCalls(idle)).toBe(0);
  expect(idle.blpop).toBeLessThanOrEqual(2);
  expect(Object.keys(idle).filter((k) => k !== 'blpop')).toEqual([]);
  expect(await q.getWorkers()).toHaveLength(1);
}, 60_000);

test('a worker that stopped without leaving is dropped by the sweep once its ttl ran out; deleteQueue removes the keys', async () => {
  const q = res.queue('swept');
  const obs = res.client();
  const own = res.twin(q);
  const w = res.worker(new Worker(own, async () => undefined, { workerTtlMs: 1000 }));
  await waitUntil(async () => (await obs.zcard(q.keys.derived.workers)) === 1, 'registered', 10_000);
  await own.close(); // the worker stops, its Queue object closed: it cannot leave
  await waitUntil(() => !w.isRunning, 'the worker stopped');
  expect(await obs.zcard(q.keys.derived.workers)).toBe(1);
  await sleep(1200);
  await q.sweep();
  expect(await obs.exists(q.keys.derived.workers, q.keys.derived.workerInfo)).toBe(0);

  const other = res.twin(q);
  const w2 = res.worker(new Worker(other, async () => undefined, { workerTtlMs: 60_000 }));
  await waitUntil(async () => (await q.getWorkers()).length === 1, 'listed', 10_000);
  await other.close(); // again stopped without leaving: its entry stays for a minute
  await waitUntil(() => !w2.isRunning, 'the second worker stopped');
  expect(await q.getWorkers()).toHaveLength(1);
  await q.deleteQueue({ tombstoneMs: 1000 });
  await waitUntil(async () => (await scanKeys(obs, `${q.keys.tag}*`)).every((k) => k.endsWith(':meta') || k.endsWith(':wake') || k.includes(':req:') || k.endsWith(':free') || k.endsWith(':notfull')), 'only the tombstone left', 10_000);
  expect(await obs.exists(q.keys.derived.workers, q.keys.derived.workerInfo)).toBe(0);
});

test('bad appName or workerTtlMs: a ValidationError before anything starts', () => {
  const q = res.queue('bad');
  expect(() => new Worker(q, async () => undefined, { appName: 7 as unknown as string })).toThrow(ValidationError);
  expect(() => new Worker(q, async () => undefined, { appName: 'x'.repeat(201) })).toThrow(/appName: must be at most 200/);
  expect(() => new Worker(q, async () => undefined, { workerTtlMs: 999 })).toThrow(/workerTtlMs/);
  expect(() => new BatchWorker(q, () => undefined, { size: 1, workerTtlMs: 1.5 })).toThrow(ValidationError);
});
