/**
 * Adding jobs: `addOne`, awaited one by one, then `addBatch`, in batches of 1,000, every
 * library. With --ref the two relq builds are compared from adds in turns instead
 * (add-turns.ts); the working tree's build also adds alone, beside the other libraries.
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, isRelq, type LibName, type Producer } from '../adapters.js';
import { addInTurns } from './add-turns.js';
import { makePayload } from '../payload.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { cpuUs, gc, payloads, type Scenario, type ScenarioContext } from './kit.js';

export const add: Scenario = {
  name: 'add',
  when: 'every rep',
  libs: 'all',
  async run(ctx, libs) {
    const { cfg } = ctx;
    const builds = libs.filter(isRelq);
    const paired = builds.length === 2;
    // with --ref the ref build adds alone too, unrecorded: both builds come to their turns with
    // the same history in this process (bench/scenarios/process.ts)
    const reported = (name: LibName) => !paired || name !== 'relq@ref';
    const one = payloads(cfg.n);
    // the batch floor adds as the floor does: its figures would be the floor's again
    const adders = libs.filter((l) => !ADAPTERS[l].addsLike);
    for (const name of adders) {
      await measureAdds(ctx, name, 'addOne', cfg.n, (p) => p.add(makePayload(-1)), async (p) => {
        for (let i = 0; i < cfg.n; i++) await p.add(one[i]!);
      }, reported(name));
    }
    if (paired) await addInTurns(ctx, builds, 'addOne');
    const batched = payloads(cfg.n);
    for (const name of adders) {
      await measureAdds(ctx, name, 'addBatch', cfg.n, (p) => p.addBatch([makePayload(-1)]), async (p) => {
        for (let i = 0; i < cfg.n; i += cfg.addBatch) await p.addBatch(batched.slice(i, i + cfg.addBatch));
      }, reported(name));
    }
    if (paired) await addInTurns(ctx, builds, 'addBatch');
  },
};

/**
 * One library, one way of adding: warm up (loads scripts, warms the connection), then time
 * `jobs` adds; recorded as `<phase>.rate` and the window's figures per job.
 */
export async function measureAdds(
  { admin, rec, conn, flush }: ScenarioContext,
  name: LibName,
  phase: string,
  jobs: number,
  warmUp: (p: Producer) => Promise<unknown>,
  addAll: (p: Producer) => Promise<void>,
  reported = true,
): Promise<void> {
  await flush();
  const p = await ADAPTERS[name].producer(conn);
  await warmUp(p);
  gc();
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, phase);
  const c0 = cpuUs();
  const t0 = performance.now();
  await addAll(p);
  const ms = performance.now() - t0;
  lm();
  const cpu = cpuUs() - c0;
  const w = await closeWindow(admin, w0);
  await p.close();
  if (reported) {
    rec.record(name, `${phase}.rate`, (jobs * 1000) / ms);
    rec.recordWindow(name, phase, jobs, w, cpu);
  }
  log(`${phase.padEnd(8)} ${name.padEnd(9)} ${Math.round((jobs * 1000) / ms)} jobs/s, ${(w.total / jobs).toFixed(2)} cmds/job, node ${(cpu / jobs).toFixed(1)} µs/job${reported ? '' : ' (not reported)'}`);
}
