/**
 * Latency under load: each library's jobs added at 80 % of its own maximum rate at c=10 for
 * `cfg.latencyLoadSec`, to one worker of concurrency 10 in this process; from add to handler
 * start, after a warm-up tenth, as in latency.ts. The maximum is this rep's 'proc10.rate' (the
 * processing scenario), or a drain of N jobs measured here when that did not run. The
 * producer is a child process (bench/child.ts), so that adding takes none of the worker's
 * CPU, as with producers elsewhere; jobs carry clockMs() stamps, which read the same in both
 * processes. It keeps at most MAX_IN_FLIGHT adds unanswered: where Redis falls behind, it adds
 * slower than asked (the rate achieved is recorded).
 */
import { ADAPTERS, type LibName } from '../adapters.js';
import { startChildren, stopChildren, type BenchChild } from '../children.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow, percentile } from '../stats.js';
import { clockMs, Completions, gc, sleep, type Scenario, type ScenarioContext } from './kit.js';
import { processOnce } from './process.js';

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

/** This rep's maximum rate of `name` at c=10, from the processing scenario or measured now. */
async function maxRate(ctx: ScenarioContext, name: LibName): Promise<number> {
  const recorded = ctx.rec.results.samples[name]?.['proc10.rate'];
  if (recorded?.length) return recorded[recorded.length - 1]!;
  return processOnce(ctx, name, 'latLoadMax', (hooks) => ADAPTERS[name].consumer(ctx.conn, CONCURRENCY, hooks), false);
}

async function underLoad(ctx: ScenarioContext, producer: BenchChild, name: LibName): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  const phase = 'latLoad';
  const max = await maxRate(ctx, name);
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
    `${phase.padEnd(8)} ${name.padEnd(9)} p50 ${figures.p50!.toFixed(3)} p95 ${figures.p95!.toFixed(3)} p99 ${figures.p99!.toFixed(3)} ms; added ${Math.round(figures.rate!)}/s of ${Math.round(rate)}/s (80 % of ${Math.round(max)}), done ${Math.round(figures.doneRate!)}/s`,
  );
}
