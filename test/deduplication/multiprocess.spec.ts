/**
 * Deduplication ids under races: producers in three child processes (four Queue objects
 * each, every one its own connection) add with one deduplication id at once. Each mode makes
 * exactly the jobs it promises, and keepLastIfActive never lets two of them run together.
 */
import { join } from 'node:path';
import { Worker, type AddResult, type DeduplicationOptions } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { uniquePrefix } from '../support/redis.js';
import { useRedis, sleep, waitUntil } from '../support/engine-harness.js';

const FIXTURE = join(process.cwd(), 'test', 'deduplication', 'fixtures', 'dedup-producer.mjs');
const kids = useEngineChildren();
const res = useRedis();

const PROCESSES = 3;
const PRODUCERS = 4; // per process
const JOBS = 20; // per producer

interface Data {
  from: string;
  i: number;
}
type Reported = AddResult & { data: Data };

/** Starts the producers, lets them all go at once and returns every add's answer. */
async function race(name: string, prefix: string, dedup: DeduplicationOptions, delayMs?: number): Promise<Reported[]> {
  const procs = Array.from({ length: PROCESSES }, (_, p) =>
    kids.fork(FIXTURE, {
      REDIS_URL: res.server.url,
      PREFIX: prefix,
      NAME: name,
      PRODUCERS,
      JOBS,
      TAG: `p${p}`,
      DEDUP: JSON.stringify(dedup),
      DELAY_MS: delayMs ?? '',
    }),
  );
  await Promise.all(procs.map((c) => c.waitFor((m) => m.type === 'ready')));
  for (const c of procs) c.proc.send({ type: 'go' });
  const done = await Promise.all(procs.map((c) => c.waitFor((m) => m.type === 'done', 60_000)));
  const results = done.flatMap((m: { results: Reported[] }) => m.results);
  expect(results).toHaveLength(PROCESSES * PRODUCERS * JOBS);
  return results;
}

test.each([
  ['untilEnded', { id: 'same' }],
  ['throttle', { id: 'same', ttlMs: 60_000 }],
] as const)('%s: 240 racing adds make exactly one job, and every other add names it', async (_mode, dedup) => {
  const prefix = uniquePrefix();
  const q = res.queue<Data>('race', { prefix });
  const results = await race('race', prefix, dedup);
  const created = results.filter((r) => r.created);
  expect(created).toHaveLength(1);
  expect(results.every((r) => r.id === created[0]!.id)).toBe(true);
  expect(results.filter((r) => !r.created).every((r) => r.deduplicated === 'ignored')).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 1, delayed: 0 });
  expect((await q.getJob(created[0]!.id))!.data).toEqual(created[0]!.data);
  expect(await q.getDeduplicationJobId('same')).toBe(created[0]!.id);
}, 60_000);

test('debounce: 240 racing adds make one delayed job that carries the last add', async () => {
  const prefix = uniquePrefix();
  const q = res.queue<Data>('debounce', { prefix });
  const results = await race('debounce', prefix, { id: 'same', mode: 'debounce' }, 60_000);
  const created = results.filter((r) => r.created);
  expect(created).toHaveLength(1);
  expect(results.filter((r) => !r.created).every((r) => r.deduplicated === 'replaced' && r.id === created[0]!.id)).toBe(true);
  expect(await q.counts()).toMatchObject({ pending: 0, delayed: 1 });
  // the last add of all was the last of its producer
  expect((await q.getJob(created[0]!.id))!.data.i).toBe(JOBS - 1);
}, 60_000);

test('debounce with keepLastIfActive under workers: never two runs at once, at most one waits, and the last add runs', async () => {
  const prefix = uniquePrefix();
  const q = res.queue<Data>('keep', { prefix });
  let running = 0;
  let mostRunning = 0;
  const runs: Data[] = [];
  res.worker(
    new Worker(
      res.twin<Data>(q),
      async (job) => {
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await sleep(15);
        runs.push(job.data);
        running -= 1;
      },
      { concurrency: 4, blockMs: 200 },
    ),
  );
  let mostWaiting = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const c = await q.counts();
      mostWaiting = Math.max(mostWaiting, c.pending + c.delayed);
    }
  })();
  const results = await race('keep', prefix, { id: 'same', mode: 'debounce', keepLastIfActive: true });
  sampling = false;
  await sampler;
  await waitUntil(async () => {
    const c = await q.counts();
    return c.pending + c.delayed + c.working === 0 && running === 0;
  }, 'every run done', 20_000);
  const outcomes = new Set(results.map((r) => (r.created ? 'created' : r.deduplicated)));
  expect(outcomes.has('deferred')).toBe(true); // the race did meet a running job
  expect(mostRunning).toBe(1);
  expect(mostWaiting).toBeLessThanOrEqual(1);
  expect(runs.length).toBeGreaterThan(1);
  expect(runs.at(-1)!.i).toBe(JOBS - 1);
  expect(await q.getDeduplicationJobId('same')).toBeNull();
}, 60_000);
