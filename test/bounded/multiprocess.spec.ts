/**
 * The bound holds for many producers in many processes: 10 producers (Queue objects, each
 * with its own connection) in 3 child processes add to one queue with bound 25 while a
 * worker in this process drains it. The unfinished count, read atomically by a script, is
 * sampled continuously and never exceeds the bound; every job is processed exactly once.
 */
import { join } from 'node:path';
import { Worker } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { uniquePrefix } from '../support/redis.js';
import { useRedis, blockedClients, sleep, waitUntil } from '../support/engine-harness.js';

const FIXTURE = join(process.cwd(), 'test', 'bounded', 'fixtures', 'producers-child.mjs');
const kids = useEngineChildren();
const { children } = kids;
const res = useRedis();

test('bound 25 is never exceeded with 10 producers in 3 processes', async () => {
  const BOUND = 25;
  const JOBS = 30; // per producer
  const prefix = uniquePrefix();
  const q = res.queue<{ from: string; i: number }>('multi', { prefix, bound: BOUND });
  await q.queueState(); // exists
  const split = [4, 3, 3];
  split.forEach((producers, p) =>
    kids.fork(FIXTURE, { REDIS_URL: res.server.url, PREFIX: prefix, NAME: 'multi', BOUND, PRODUCERS: producers, JOBS, TAG: `p${p}` }),
  );
  await Promise.all(children.map((c) => c.waitFor((m) => m.type === 'ready')));

  let max = 0;
  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const c = await q.counts();
      max = Math.max(max, c.pending + c.working + c.delayed);
      samples += 1;
    }
  })();

  const seen = new Map<string, number>();
  // let the producers fill the queue and block
  await waitUntil(
    async () => {
      const c = await q.counts();
      max = Math.max(max, c.pending + c.working + c.delayed);
      return c.pending === BOUND && (await q.queueState()).waitingProducers > 0;
    },
    'the queue full and producers waiting',
    20_000,
  );
  const w = res.worker(
    new Worker(res.twin<{ from: string; i: number }>(q), async (job) => {
      const key = `${job.data.from}:${job.data.i}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      await sleep(1);
    }, { concurrency: 4, blockMs: 500 }),
  );
  await Promise.all(children.map((c) => c.waitFor((m) => m.type === 'done', 60_000)));
  await waitUntil(() => seen.size === 10 * JOBS, 'all jobs processed', 20_000);
  sampling = false;
  await sampler;
  await w.close();

  expect(children.map((c) => c.messages.find((m) => m.type === 'done').added)).toEqual(split.map((p) => p * JOBS));
  expect([...seen.values()].every((n) => n === 1)).toBe(true);
  expect(samples).toBeGreaterThan(50);
  expect(max).toBeLessThanOrEqual(BOUND);
  expect(max).toBe(BOUND); // it was full: producers really had to wait
  expect((await q.queueState()).waitingProducers).toBe(0);
});

test('a producer SIGKILLed while it waits on the full queue blocks nobody and is forgotten', async () => {
  const prefix = uniquePrefix();
  const q = res.queue<{ from: string; i: number }>('crash', { prefix, bound: 1 });
  await q.add({ from: 'test', i: 0 });
  const child = kids.fork(FIXTURE, { REDIS_URL: res.server.url, PREFIX: prefix, NAME: 'crash', BOUND: 1, PRODUCERS: 1, JOBS: 1, TAG: 'dead' });
  await waitUntil(async () => (await q.queueState()).waitingProducers === 1, 'child waiting');
  await child.kill('SIGKILL');
  const newcomer = res.twin<{ from: string; i: number }>(q, { bound: 1 });
  const adding = newcomer.add({ from: 'test', i: 1 }, { waitMs: 15_000 });
  const obs = res.client();
  await waitUntil(async () => (await blockedClients(obs)) === 1, 'the newcomer waiting for room', 10_000);
  const [l] = await q.lease();
  await q.ack(l!);
  await adding; // not held up by the dead waiter ahead of it
  await waitUntil(async () => (await q.queueState()).waitingProducers === 0, 'dead waiter forgotten', 10_000);
  expect((await q.lease())[0]!.job.data).toEqual({ from: 'test', i: 1 });
});
