/**
 * Four worker processes on one Redis: a pre-filled queue of N jobs, then four child processes
 * (bench/child.ts), each running one worker of concurrency 10 with a no-op handler; each
 * library in turn, the same four children throughout the rep. Jobs/s from the first handler
 * start in any process to the last completion in any (clockMs(), one clock for all); Redis
 * commands and CPU per job over the whole phase (the workers' start-up included), Node CPU
 * of the four together; each process's share of the jobs.
 */
import { ADAPTERS, type LibName } from '../adapters.js';
import { startChildren, stopChildren, type BenchChild } from '../children.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { Completions, fill, gc, type Scenario, type ScenarioContext } from './kit.js';

export const PROCESSES = 4;
const CONCURRENCY = 10;

export const processes: Scenario = {
  name: 'processes',
  when: 'every rep',
  libs: 'queues',
  async run(ctx, libs) {
    // the --ref build is compared in the in-process scenarios only
    const measured = libs.filter((l) => l !== 'relq@ref');
    if (measured.length === 0) return;
    // the children start while the first queue fills
    const starting = startChildren(PROCESSES);
    starting.catch(() => undefined); // awaited below; not unhandled meanwhile
    try {
      for (const name of measured) await processesOnce(ctx, starting, name);
    } finally {
      await stopChildren(await starting.catch(() => []));
    }
  },
};

async function processesOnce({ cfg, conn, admin, rec, flush }: ScenarioContext, starting: Promise<readonly BenchChild[]>, name: LibName): Promise<void> {
  const phase = 'procs4';
  await flush();
  const p = await ADAPTERS[name].producer(conn);
  await fill(cfg, p, cfg.n);
  await p.close();
  const children = await starting;
  gc();
  // the children report their counts so far; each new completion counts once here
  const done = new Completions(cfg.n);
  const seen = children.map(() => 0);
  const unsubscribe = children.map((c, i) =>
    c.onProgress((count) => {
      for (; seen[i]! < count; seen[i]!++) done.onDone();
    }),
  );
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, phase);
  await Promise.all(children.map((c) => c.request({ cmd: 'consume', lib: name, conn, concurrency: CONCURRENCY }, 'consuming')));
  await done.wait(`${phase} ${name}`);
  lm();
  const w = await closeWindow(admin, w0);
  for (const u of unsubscribe) u();
  const stopped = await Promise.all(children.map((c) => c.request({ cmd: 'stop' }, 'stopped')));

  const jobs = stopped.reduce((a, s) => a + s.count, 0);
  const first = Math.min(...stopped.filter((s) => s.count > 0).map((s) => s.firstStart));
  const last = Math.max(...stopped.map((s) => s.lastDone));
  const rate = (jobs * 1000) / (last - first);
  const shares = stopped.map((s) => (s.count / jobs) * 100).sort((a, b) => b - a);
  rec.record(name, `${phase}.rate`, rate);
  rec.recordWindow(name, phase, jobs, w, stopped.reduce((a, s) => a + s.cpuUs, 0));
  shares.forEach((share, i) => rec.record(name, `${phase}.share${i + 1}`, share));
  log(
    `${phase.padEnd(8)} ${name.padEnd(9)} ${Math.round(rate)} jobs/s, ${(w.total / jobs).toFixed(2)} cmds/job, redis ${((w.redisCpuSec * 1e6) / jobs).toFixed(1)} µs/job, shares ${shares.map((s) => s.toFixed(0)).join('/')} %${jobs === cfg.n ? '' : ` (${jobs} completions of ${cfg.n} jobs)`}`,
  );
}
