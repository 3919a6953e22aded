/**
 * relq processing throughput (concurrency 10) with a backlog of `b` jobs, for each of
 * `cfg.backlogs` (1M only with 4 GiB free). One worker; the queue is paused while it is
 * filled; time runs from resume() to the last counted completion. Backlogs >= N: N jobs are
 * processed from the top of the backlog (which never drops below b - N) and topped up between
 * reps. Smaller backlogs: cycles of fill b / drain b until N jobs are processed, only the
 * draining timed.
 */
import { freemem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isRelq, QUEUE_NAME, RELQ_LIBS, RELQ_QUEUE_OPTIONS, type Producer, type RelqName } from '../adapters.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { usedMemory } from '../stats.js';
import { Completions, fill, gc, sleep, type Scenario, type ScenarioContext } from './kit.js';

export const backlog: Scenario = {
  name: 'backlog',
  when: 'after',
  libs: 'all',
  async run(ctx, libs) {
    for (const b of ctx.cfg.backlogs) {
      if (b >= 1_000_000 && freemem() < 4 * 1024 ** 3) {
        ctx.rec.results.notes.push(`Backlog ${b} skipped: only ${(freemem() / 1024 ** 3).toFixed(1)} GiB free.`);
        continue;
      }
      for (const name of libs.filter(isRelq)) await backlogRun(ctx, name, b);
    }
  },
};

async function backlogRun({ cfg, conn, admin, rec, flush }: ScenarioContext, name: RelqName, b: number): Promise<void> {
  await flush();
  const lib = RELQ_LIBS[name]!;
  const producer = new lib.Queue<Payload, unknown>(QUEUE_NAME, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const wq = new lib.Queue<Payload, unknown>(QUEUE_NAME, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const p: Producer = {
    add: (d) => producer.add(d),
    addBatch: (ds) => producer.addBulk(ds.map((data) => ({ data }))),
    close: () => producer.close(),
  };
  await producer.pause();
  const tf = performance.now();
  const m0 = await usedMemory(admin);
  await fill(cfg, p, b, 4);
  const m1 = await usedMemory(admin);
  const fillSec = (performance.now() - tf) / 1000;
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
  for (let rep = 0; rep < cfg.reps; rep++) {
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
    log(`backlog  ${name.padEnd(9)} ${b} waiting: ${Math.round(rate)} jobs/s (fill ${Math.round(b / fillSec)} jobs/s, ${((m1 - m0) / 1024 / 1024).toFixed(0)} MiB)`);
  }
  rec.record(name, `backlogMem.${b}`, ((m1 - m0) / 1024 / 1024 / b) * 10_000);
  await worker.close();
  sub.unsubscribe();
  await wq.close();
  await producer.close();
}
