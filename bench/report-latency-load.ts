/** RESULTS.md's section on latency under load (bench/scenarios/latency-load.ts). */
import type { ReportCells } from './report-payloads.js';
import type { RunMeta } from './results.js';
import { LOAD } from './scenarios/latency-load.js';
import { fmt } from './stats.js';

/** A library processing more than this share below the asked rate fell behind. */
const BEHIND = 0.05;

type Cells = Pick<ReportCells, 'libs' | 'label' | 'cell' | 'med' | 'ratio'> & { get(lib: string, metric: string): number[] };

export function latencyLoadSection(meta: RunMeta, { libs, label, cell, med, ratio, get }: Cells): string[] {
  if (!libs.some((l) => get(l, 'latLoad.p50').length)) return [];
  const reps = meta.cfg.reps;
  const pct = LOAD * 100;
  const L: string[] = [];
  L.push(`## Latency under load: ${pct} % of each library's own maximum at concurrency 10 (ms, ${reps > 1 ? `median of ${reps} reps, <sub>min–max</sub>` : '1 rep'})`, '');
  L.push(
    `Each library's jobs added at ${pct} % of its own maximum end to end (measured just before, in this rep: the producer adding flat out, at most 1,000 unanswered, while the worker processes; the jobs completed per second over ${meta.cfg.latencyLoadMaxSec ?? '?'} s after a quarter of that as warm-up) for ${meta.cfg.latencyLoadSec ?? '?'} s, by a producer in a child process (one by one, not awaited, at most 1,000 unanswered: where Redis falls behind it adds slower than asked), to one worker of concurrency 10 in the bench process; from just before \`add()\` to the start of the handler (one monotonic clock for both processes), the first 10% dropped as warm-up. Where the worker falls behind, jobs wait and the tail grows.`,
    '',
  );
  L.push(`| | ${libs.map((l) => label[l]).join(' | ')} | relq / BullMQ | relq / bee-queue |`, `| --- | ${libs.map(() => '---').join(' | ')} | --- | --- |`);
  for (const [what, m, d] of [
    ['p50', 'latLoad.p50', 3],
    ['p95', 'latLoad.p95', 3],
    ['p99', 'latLoad.p99', 3],
    ['maximum at c=10 (jobs/s)', 'latLoad.max', 0],
    ['adds meanwhile, flat out (jobs/s)', 'latLoad.maxAdded', 0],
    [`add rate asked, ${pct} % of the maximum (jobs/s)`, 'latLoad.target', 0],
    ['add rate achieved (jobs/s)', 'latLoad.rate', 0],
    ['processed (jobs/s, first to last completion)', 'latLoad.doneRate', 0],
    ['Redis commands per job (add and processing)', 'latLoad.cmds', 2],
  ] as Array<[string, string, number]>) {
    L.push(`| ${what} | ${libs.map((l) => cell(l, m, d)).join(' | ')} | ${ratio(med('relq', m), med('bullmq', m))} | ${ratio(med('relq', m), med('bee-queue', m))} |`);
  }
  L.push('');
  for (const l of libs) {
    const asked = get(l, 'latLoad.target');
    const added = get(l, 'latLoad.rate');
    const behind = get(l, 'latLoad.doneRate')
      .map((done, rep) => ({ done: done / asked[rep]!, added: added[rep]! / asked[rep]! }))
      .filter((x) => x.done < 1 - BEHIND);
    if (!behind.length) continue;
    const worst = behind.reduce((a, b) => (b.done < a.done ? b : a));
    L.push(
      `Note: ${label[l]} fell behind under load in ${behind.length} of ${asked.length} reps: it processed as little as ${fmt(worst.done * 100, 0)} % of the asked add rate (adds achieved ${fmt(worst.added * 100, 0)} % of it), so its latencies there measure a queue, not pickup.`,
      '',
    );
  }
  return L;
}
