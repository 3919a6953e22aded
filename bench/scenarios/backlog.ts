/**
 * relq processing throughput (concurrency 10) with a backlog of `b` jobs, for each of
 * `cfg.backlogs` (1M only with 4 GiB free per build). One worker per build, each build on
 * its own queue; a queue is paused while it is filled; a drain's time runs from resume() to
 * its last counted completion. Memory: what the queue's keys take once filled (MEMORY
 * USAGE). Backlogs >= N: ten drains of N/10 jobs per rep from the top of the backlog (which
 * never drops below b - N/10), topped up before each. Smaller backlogs: cycles of fill b /
 * drain b until `cfg.smallBacklogJobs` are processed, only the draining timed.
 *
 * With --ref both builds hold their backlog at once and take turns drain by drain (X Y,
 * then Y X), so both meet the same states of the machine. A drain of 1,000 lasts about
 * 40 ms and single drains ranged from 26 to 70 ms: with the same build on both sides, 20
 * alternating drains per rep still gave per-rep ratios from -9 % to +8 %, 100 gave ±3 %.
 * One drain of N per build and rep (about a second each) spread over -18 % to +21 %, so
 * large backlogs drain in ten alternating turns too.
 */
import { freemem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isRelq, buildQueueName, RELQ_LIBS, RELQ_QUEUE_OPTIONS, type Producer, type RelqName } from '../adapters.js';
import type { BenchConfig } from '../options.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { queueMemory } from '../stats.js';
import { Completions, fill, gc, sleep, turnOrder, type Scenario, type ScenarioContext } from './kit.js';

export const backlog: Scenario = {
  name: 'backlog',
  when: 'after',
  libs: 'all',
  async run(ctx, libs) {
    const builds = libs.filter(isRelq);
    for (const b of ctx.cfg.backlogs) {
      if (b >= 1_000_000 && freemem() < 4 * builds.length * 1024 ** 3) {
        ctx.rec.results.notes.push(`Backlog ${b} skipped: only ${(freemem() / 1024 ** 3).toFixed(1)} GiB free.`);
        continue;
      }
      await ctx.flush();
      const sides: BacklogSide[] = [];
      try {
        for (const name of builds) sides.push(await openSide(ctx, name, b));
        const { drains } = drainPlan(ctx.cfg, b);
        for (let rep = 0; rep < ctx.cfg.reps; rep++) {
          for (const side of sides) side.begin();
          await ctx.rec.quiet();
          // drain by drain, the order alternating across reps too
          for (let d = 0; d < drains; d++) {
            for (const side of turnOrder(sides, rep * drains + d)) await side.drain();
          }
          for (const side of sides) side.end();
        }
      } finally {
        for (const side of sides) await side.close();
      }
    }
  },
};

/** Drains per rep of a backlog of at least N: N jobs in all. */
const LARGE_DRAINS = 10;

/** Per rep: `drains` drains of `perDrain` jobs each. */
function drainPlan(cfg: BenchConfig, b: number): { drains: number; perDrain: number } {
  return b >= cfg.n ? { drains: LARGE_DRAINS, perDrain: Math.ceil(cfg.n / LARGE_DRAINS) } : { drains: Math.ceil(cfg.smallBacklogJobs / b), perDrain: b };
}

interface BacklogSide {
  /** Starts a rep. */
  begin(): void;
  /** One drain: tops the backlog up to `b`, then processes min(b, N) jobs from it, timed. */
  drain(): Promise<void>;
  /** Ends a rep: records the rate over its drains. */
  end(): void;
  close(): Promise<void>;
}

async function openSide({ cfg, conn, admin, rec }: ScenarioContext, name: RelqName, b: number): Promise<BacklogSide> {
  const lib = RELQ_LIBS[name]!;
  const queueName = buildQueueName(name);
  const producer = new lib.Queue<Payload, unknown>(queueName, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const wq = new lib.Queue<Payload, unknown>(queueName, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const p: Producer = {
    add: (d) => producer.add(d),
    addBatch: (ds) => producer.addBulk(ds.map((data) => ({ data }))),
    close: () => producer.close(),
  };
  await producer.pause();
  const tf = performance.now();
  await fill(cfg, p, b, 4);
  const fillSec = (performance.now() - tf) / 1000;
  const bytes = await queueMemory(admin, queueName);
  rec.record(name, `backlogMem.${b}`, (bytes / 1024 / 1024 / b) * 10_000);
  let counter: Completions | undefined;
  const worker = new lib.Worker<Payload, unknown>(wq, async () => undefined, { concurrency: 10 });
  const sub = worker.events.subscribe((e) => {
    if (e.type === 'completed') counter?.onDone();
  });
  await sleep(200);
  const settle = async () => {
    await producer.pause();
    for (let k = 0; k < 200 && worker.inFlight > 0; k++) await sleep(10);
    await sleep(20);
  };
  const { perDrain } = drainPlan(cfg, b);
  let processed = 0;
  let ms = 0;
  let endMark = (): void => {};
  return {
    begin() {
      processed = 0;
      ms = 0;
      endMark = rec.loadMark(name, `backlog.${b}`);
    },
    async drain() {
      const pending = (await producer.counts()).pending;
      if (pending < b) await fill(cfg, p, b - pending, 4);
      gc();
      counter = new Completions(perDrain);
      const t0 = performance.now();
      await producer.resume();
      await counter.wait(`backlog ${b}`);
      ms += counter.last - t0;
      processed += perDrain;
      counter = undefined;
      await settle();
    },
    end() {
      const rate = (processed * 1000) / ms;
      rec.record(name, `backlog.${b}`, rate);
      endMark();
      log(`backlog  ${name.padEnd(9)} ${b} waiting: ${Math.round(rate)} jobs/s (fill ${Math.round(b / fillSec)} jobs/s, ${(bytes / 1024 / 1024).toFixed(0)} MiB)`);
    },
    async close() {
      await worker.close();
      sub.unsubscribe();
      await wq.close();
      await producer.close();
    },
  };
}
