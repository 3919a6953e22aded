/**
 * Processing a pre-filled queue of `cfg.n` jobs at each concurrency, every library, then
 * relq's batch mode (`procBatch`). Time runs from the first to the last completion. With
 * --ref the two relq builds are measured for their comparison in turns instead
 * (process-turns.ts); the working tree's build also drains alone, beside the other libraries.
 */
import { ADAPTERS, isRelq, type Consumer, type LibName } from '../adapters.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { Completions, cpuUs, fill, gc, type MakePayload, type Scenario, type ScenarioContext } from './kit.js';
import { processInTurns } from './process-turns.js';

export const processing: Scenario = {
  name: 'process',
  when: 'every rep',
  libs: 'all',
  async run(ctx, libs) {
    const { cfg, conn } = ctx;
    const builds = libs.filter(isRelq);
    const paired = builds.length === 2;
    // With --ref the ref build drains alone too, unrecorded: both builds come to their turns
    // with the same history in this process (an A/A run showed the one that had not drained
    // alone 12 % faster in BatchWorker turns)
    const reported = (name: LibName) => !paired || name !== 'relq@ref';
    for (const c of cfg.concurrencies) {
      for (const name of libs) {
        await processOnce(ctx, name, `proc${c}`, (hooks) => ADAPTERS[name].consumer(conn, c, hooks), reported(name));
      }
      if (paired) await processInTurns(ctx, builds, `proc${c}`, (name, own, hooks) => ADAPTERS[name].consumer(own, c, hooks));
    }
    for (const name of libs.filter(isRelq)) {
      await processOnce(ctx, name, 'procBatch', (hooks) => ADAPTERS[name].batchConsumer!(conn, cfg.batchSize, cfg.batchConcurrency, hooks), reported(name));
    }
    if (paired) {
      await processInTurns(ctx, builds, 'procBatch', (name, own, hooks) => ADAPTERS[name].batchConsumer!(own, cfg.batchSize, cfg.batchConcurrency, hooks));
    }
  },
};

/** What a processing figure drains: `jobs` made by `make`, added in batches of `batch` (default: N jobs of 253 bytes). */
export interface Backlog {
  jobs: number;
  make?: MakePayload;
  batch?: number;
}

/**
 * One library drains a pre-filled queue (`backlog`); recorded as `<phase>.rate` and the
 * window's figures per job. Every job must complete once: a count short of it times out,
 * one over it fails the run. Returns its jobs/s.
 */
export async function processOnce(
  { cfg, conn, admin, rec, flush }: ScenarioContext,
  name: LibName,
  phase: string,
  start: (hooks: { onDone(): void }) => Promise<Consumer>,
  reported = true,
  { jobs, make, batch }: Backlog = { jobs: cfg.n },
): Promise<number> {
  await flush();
  const p = await ADAPTERS[name].producer(conn);
  await fill(cfg, p, jobs, 1, make, batch);
  await p.close();
  gc();
  const done = new Completions(jobs);
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, phase);
  const c0 = cpuUs();
  const consumer = await start({ onDone: done.onDone });
  await done.wait(`${phase} ${name}`);
  const cpu = cpuUs() - c0;
  lm();
  const w = await closeWindow(admin, w0);
  await consumer.close();
  if (done.count !== jobs) throw new Error(`${phase} ${name}: ${done.count} completions of ${jobs} jobs`);
  const rate = done.rate();
  if (reported) {
    rec.record(name, `${phase}.rate`, rate);
    rec.recordWindow(name, phase, jobs, w, cpu);
  }
  log(`${phase.padEnd(8)} ${name.padEnd(9)} ${Math.round(rate)} jobs/s, ${(w.total / jobs).toFixed(2)} cmds/job, node ${(cpu / jobs).toFixed(1)} µs/job${reported ? '' : ' (not reported)'}`);
  return rate;
}
