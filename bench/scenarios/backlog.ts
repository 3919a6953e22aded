/**
 * relq processing throughput (concurrency 10) with a backlog of `b` jobs, for each of
 * `cfg.backlogs` (1M only with 4 GiB free per build). One worker per build, each build on
 * its own queue; a queue is paused while it is filled; time runs from resume() to the last
 * counted completion. Memory: what the queue's keys take once filled (MEMORY USAGE). Backlogs >= N: N jobs are processed from the top of the backlog (which
 * never drops below b - N) and topped up between reps. Smaller backlogs: cycles of fill b /
 * drain b until N jobs are processed, only the draining timed. With --ref both builds hold
 * their backlog at once and take turns rep by rep (X Y, then Y X), so the pairs compared
 * were measured back to back.
 */
import { freemem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isRelq, buildQueueName, RELQ_LIBS, RELQ_QUEUE_OPTIONS, type Producer, type RelqName } from '../adapters.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { queueMemory } from '../stats.js';
import { Completions, fill, gc, sleep, type Scenario, type ScenarioContext } from './kit.js';

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
      const sides = new Map<RelqName, BacklogSide>();
      try {
        for (const name of builds) sides.set(name, await openSide(ctx, name, b));
        for (let rep = 0; rep < ctx.cfg.reps; rep++) {
          // one measurement per build and rep: X Y, then Y X in the next rep
          for (const name of rep % 2 === 0 ? builds : [...builds].reverse()) await sides.get(name)!.measure();
        }
      } finally {
        for (const side of sides.values()) await side.close();
      }
    }
  },
};

interface BacklogSide {
  /** One rep: processes N jobs from the backlog and records the rate. */
  measure(): Promise<void>;
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
  return {
    async measure() {
      const lm = rec.loadMark(name, `backlog.${b}`);
      let processed = 0;
      let ms = 0;
      const perCycle = Math.min(b, cfg.n);
      while (processed < cfg.n) {
        const pending = (await producer.counts()).pending;
        if (pending < b) await fill(cfg, p, b - pending, 4);
        gc();
        if (processed === 0) await rec.quiet();
        counter = new Completions(perCycle);
        const t0 = performance.now();
        await producer.resume();
        await counter.wait(`backlog ${b}`);
        ms += counter.last - t0;
        processed += perCycle;
        counter = undefined;
        await settle();
      }
      const rate = (processed * 1000) / ms;
      rec.record(name, `backlog.${b}`, rate);
      lm();
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
