/**
 * Grouped work, relq against groupmq: one job at a time per group (relq `groupConcurrency: 1`,
 * groupmq's own rule), one worker of 10 slots, no-op handlers, each workload added in batches
 * before its worker starts. Workloads: `uniform`, N jobs over 100 groups; `skewed`, one group
 * of N/2 jobs added first, then 99 groups of N/200 round-robin (10,000 and 100 at N 20,000),
 * whose "small groups served" is the median over the 99 of the time from the worker's start to
 * the group's first completion; `single`, one group of N/10 jobs (2,000 at least). --quick
 * runs a fifth of each. Without groupmq in --libs relq runs alone (its figures, no ratios);
 * without relq groupmq does.
 */
import { performance } from 'node:perf_hooks';
import { GROUPED_DRIVERS, isGroupedLib, type GroupedJob, type GroupedLib } from '../grouped-libs.js';
import { makePayload } from '../payload.js';
import { log } from '../recorder.js';
import { closeWindow, median, openWindow, type WindowStats } from '../stats.js';
import { Completions, cpuUs, gc, type Scenario, type ScenarioContext } from './kit.js';

const GROUPS = 100;
const CONCURRENCY = 10;

interface Workload {
  name: 'uniform' | 'skewed' | 'single';
  jobs: GroupedJob[];
  /** skewed: the groups whose first completion is timed */
  small?: ReadonlySet<string>;
}

const job = (group: string, i: number): GroupedJob => ({ group, data: makePayload(i) });

/** The workloads' sizes for N jobs per figure (--quick: a fifth of each, which only shows that they run). */
export function groupedSizes(n: number, quick: boolean): { uniform: number; big: number; perSmall: number; single: number } {
  const scale = quick ? 1 / 5 : 1;
  const jobs = n * scale;
  return {
    uniform: Math.round(jobs),
    big: Math.max(1, Math.round(jobs / 2)),
    perSmall: Math.max(1, Math.round(jobs / 200)),
    single: Math.round(Math.max(2000, n / 10) * scale),
  };
}

function workloads(n: number, quick: boolean): Workload[] {
  const size = groupedSizes(n, quick);
  const uniform = Array.from({ length: size.uniform }, (_, i) => job(`g${i % GROUPS}`, i));
  const small = Array.from({ length: GROUPS - 1 }, (_, g) => `s${g}`);
  const skewed = [
    ...Array.from({ length: size.big }, (_, i) => job('big', i)),
    ...Array.from({ length: size.perSmall * small.length }, (_, i) => job(small[i % small.length]!, size.big + i)),
  ];
  const single = Array.from({ length: size.single }, (_, i) => job('g0', i));
  return [
    { name: 'uniform', jobs: uniform },
    { name: 'skewed', jobs: skewed, small: new Set(small) },
    { name: 'single', jobs: single },
  ];
}

export const grouped: Scenario = {
  name: 'grouped',
  when: 'every rep',
  libs: 'grouped',
  async run(ctx, libs) {
    for (const w of workloads(ctx.cfg.n, ctx.cfg.quick)) {
      for (const name of libs.filter(isGroupedLib)) await groupedOnce(ctx, name, w);
    }
  },
};

async function groupedOnce({ cfg, conn, admin, rec, flush }: ScenarioContext, name: GroupedLib, w: Workload): Promise<void> {
  const phase = `grouped.${w.name}`;
  const driver = GROUPED_DRIVERS[name](conn);
  await flush();
  try {
    await driver.add(w.jobs, cfg.addBatch);
    gc();
    const done = new Completions(w.jobs.length);
    const firstDone = new Map<string, number>();
    await rec.quiet();
    const w0 = await openWindow(admin);
    const lm = rec.loadMark(name, phase);
    const c0 = cpuUs();
    const t0 = performance.now();
    const consumer = await driver.consume(CONCURRENCY, (group) => {
      if (!firstDone.has(group)) firstDone.set(group, performance.now());
      done.onDone();
    });
    let cpu: number;
    let win: WindowStats;
    try {
      await done.wait(`${phase} ${name}`);
      cpu = cpuUs() - c0;
      lm();
      win = await closeWindow(admin, w0);
    } finally {
      await consumer.close();
    }
    const rate = done.rate();
    rec.record(name, `${phase}.rate`, rate);
    rec.recordWindow(name, phase, w.jobs.length, win, cpu);
    let served = '';
    if (w.small) {
      const p50 = median([...w.small].map((g) => firstDone.get(g)! - t0));
      rec.record(name, `${phase}.smallServedP50Ms`, p50);
      served = `, small groups' first job done at p50 ${p50.toFixed(1)} ms`;
    }
    log(`${phase.padEnd(16)} ${name.padEnd(9)} ${Math.round(rate)} jobs/s, ${(win.total / w.jobs.length).toFixed(2)} cmds/job${served}`);
  } finally {
    await driver.remove();
    const left = await admin.dbsize();
    if (left > 0) log(`${phase} ${name}: ${left} keys left after removing the queue`);
  }
}
