/**
 * Latency under load: each library's jobs added at 80 % of its own maximum end to end for
 * `cfg.latencyLoadSec`, to one worker of concurrency 10 in this process; from add to handler
 * start, after a warm-up tenth, as in latency.ts. The maximum is measured here, on this
 * machine, with the producer running: it adds flat out (one by one, at most MAX_IN_FLIGHT
 * unanswered) while the worker processes, and the maximum is the worker's completions per
 * second over `cfg.latencyLoadMaxSec`, after a quarter of that as warm-up. (A drain of a
 * pre-filled queue, with no producer taking CPU, overstates it: at 80 % of a drain's rate a
 * 2-core machine fell behind, and latencies measured the queue.) The producer is a child
 * process (bench/child.ts), so that adding takes none of the worker's CPU, as with producers
 * elsewhere; jobs carry clockMs() stamps, which read the same in both processes. Where Redis
 * falls behind, the producer adds slower than asked; the rates asked, achieved and processed
 * are recorded, and the report flags a library that processed more than 5 % below the asked rate.
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, type LibName } from '../adapters.js';
import { startChildren, stopChildren, type BenchChild } from '../children.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow, percentile } from '../stats.js';
import { clockMs, Completions, gc, sleep, type Scenario, type ScenarioContext } from './kit.js';

/** The share of its maximum rate each library is loaded with. */
export const LOAD = 0.8;
const CONCURRENCY = 10;
/** Adds the producer leaves unanswered at most (relq's client times a command out after 5 s in its queue). */
const MAX_IN_FLIGHT = 1000;

export const latencyLoad: Scenario = {
  name: 'latency-load',
  when: 'every rep',
  libs: 'queues',
  async run(ctx, libs) {
    // the --ref build is compared in the in-process scenarios only
    const measured = libs.filter((l) => l !== 'relq@ref');
    if (measured.length === 0) return;
    const [producer] = await startChildren(1);
    try {
      for (const name of measured) await underLoad(ctx, producer!, name);
    } finally {
      await stopChildren([producer!]);
    }
  },
};

/**
 * The jobs/s `name` sustains end to end: completions per second of one worker of concurrency
 * 10 while `producer` adds flat out, over `cfg.latencyLoadMaxSec`; and the producer's adds/s.
 */
async function endToEndMax({ cfg, conn, rec, flush }: ScenarioContext, producer: BenchChild, name: LibName): Promise<{ rate: number; added: number }> {
  const windowMs = cfg.latencyLoadMaxSec * 1000;
  await flush();
  let completed = 0;
  const consumer = await ADAPTERS[name].consumer(conn, CONCURRENCY, {
    onDone: () => {
      completed += 1;
    },
  });
  // the warm-up below lets the worker settle too
  gc();
  await rec.quiet();
  await producer.request({ cmd: 'flood', lib: name, conn, from: 0, maxInFlight: MAX_IN_FLIGHT }, 'flooding');
  await sleep(windowMs / 4);
  const c0 = completed;
  const t0 = performance.now();
  const lm = rec.loadMark(name, 'latLoadMax');
  await sleep(windowMs);
  const rate = ((completed - c0) * 1000) / (performance.now() - t0);
  lm();
  const { count, sentMs } = await producer.request({ cmd: 'halt' }, 'halted');
  // the backlog left is dropped by the next flush
  await consumer.close();
  if (!(rate > 0)) throw new Error(`latLoadMax ${name}: no job completed in ${windowMs} ms of adding`);
  return { rate, added: (count * 1000) / sentMs };
}

async function underLoad(ctx: ScenarioContext, producer: BenchChild, name: LibName): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  const phase = 'latLoad';
  const { rate: max, added: maxAdded } = await endToEndMax(ctx, producer, name);
  const rate = max * LOAD;
  const total = Math.round(rate * cfg.latencyLoadSec);
  const warmup = Math.round(total / 10);
  await flush();
  const lat: number[] = [];
  const done = new Completions(total);
  const consumer = await ADAPTERS[name].consumer(conn, CONCURRENCY, {
    onDone: done.onDone,
    onStart: (d) => {
      if (d.seq >= warmup) lat.push(clockMs() - d.ts);
    },
  });
  await sleep(100);
  gc();
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, phase);
  const { sentMs } = await producer.request({ cmd: 'produce', lib: name, conn, from: 0, count: total, rate, maxInFlight: MAX_IN_FLIGHT }, 'produced', cfg.latencyLoadSec * 3000 + 60_000);
  await done.wait(`${phase} ${name}`);
  lm();
  const w = await closeWindow(admin, w0);
  await consumer.close();

  lat.sort((a, b) => a - b);
  const figures: Record<string, number> = {
    max,
    maxAdded,
    target: rate,
    rate: (total * 1000) / sentMs,
    doneRate: done.rate(),
    p50: percentile(lat, 50),
    p95: percentile(lat, 95),
    p99: percentile(lat, 99),
    cmds: w.total / total,
  };
  for (const [what, value] of Object.entries(figures)) rec.record(name, `${phase}.${what}`, value);
  log(
    `${phase.padEnd(8)} ${name.padEnd(9)} p50 ${figures.p50!.toFixed(3)} p95 ${figures.p95!.toFixed(3)} p99 ${figures.p99!.toFixed(3)} ms; added ${Math.round(figures.rate!)}/s of ${Math.round(rate)}/s (80 % of ${Math.round(max)} processed while adding ${Math.round(maxAdded)}/s flat out), done ${Math.round(figures.doneRate!)}/s`,
  );
}
