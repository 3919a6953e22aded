/**
 * The RESULTS.md section of a `--ref` run: every figure of the working tree's relq against
 * the same figure of relq@ref, measured in the same run. The builds' samples pair up by index:
 * each pair was measured back to back (in turns X Y Y X within a rep for processing, X Y then
 * Y X from rep to rep for backlogs, slices of 0.5 s for latency), and a figure's change is the
 * median of its pairs' ratios, so drift of the machine and the order cancel out.
 */
import type { BenchResults, RunMeta } from './report.js';
import { fmt, median, range } from './stats.js';

/** How much worse than relq@ref a figure may be before the section flags it. */
export const WORSE_LIMIT = 0.05;

type Direction = 'higher' | 'lower';

/** Figure label, digits and which way is better, by metric name (metrics not listed are not compared). */
function describe(metric: string): { label: string; digits: number; better: Direction } | undefined {
  const phase: Record<string, string> = {
    addOne: 'add, one by one',
    addBatch: 'add, batches of 1,000',
    proc1: 'process, c=1',
    proc10: 'process, c=10',
    proc50: 'process, c=50',
    procBatch: 'process, BatchWorker',
  };
  const [p, what] = metric.split('.') as [string, string | undefined];
  if (phase[p] && what === 'rate') return { label: `${phase[p]}: jobs/s`, digits: 0, better: 'higher' };
  if (phase[p] && what === 'cmds') return { label: `${phase[p]}: Redis commands per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'redisCpuUs') return { label: `${phase[p]}: Redis CPU µs per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'scriptUs') return { label: `${phase[p]}: µs in scripts per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'nodeCpuUs') return { label: `${phase[p]}: Node CPU µs per job`, digits: 2, better: 'lower' };
  // latency: the run in which the two builds take turns (bench/scenarios/latency.ts)
  if (p === 'latTurns' && what && /^p\d+$/.test(what)) return { label: `latency ${what} at a steady rate, builds taking turns (ms)`, digits: 3, better: 'lower' };
  if (metric === 'latTurns.nodeCpuPct') return { label: 'latency run: Node CPU (% of a core)', digits: 1, better: 'lower' };
  if (metric === 'latTurns.redisCpuPct') return { label: 'latency run: Redis CPU (% of a core)', digits: 1, better: 'lower' };
  if (metric === 'latTurns.cmds') return { label: 'latency run: Redis commands per job', digits: 2, better: 'lower' };
  if (metric === 'mem.mib') return { label: 'Redis MiB per 10,000 waiting jobs', digits: 2, better: 'lower' };
  if (metric === 'idle.cmdsPerSec') return { label: 'idle worker: commands/s', digits: 2, better: 'lower' };
  if (metric === 'rt.add') return { label: 'round trips per add', digits: 2, better: 'lower' };
  if (metric === 'rt.proc') return { label: 'round trips per processed job', digits: 2, better: 'lower' };
  const backlog = /^backlog\.(\d+)$/.exec(metric);
  if (backlog) return { label: `process from a backlog of ${fmt(Number(backlog[1]), 0)}: jobs/s`, digits: 0, better: 'higher' };
  const backlogMem = /^backlogMem\.(\d+)$/.exec(metric);
  if (backlogMem) return { label: `Redis MiB per 10,000 jobs in a backlog of ${fmt(Number(backlogMem[1]), 0)}`, digits: 2, better: 'lower' };
  return undefined;
}

/** The section's lines, or none when the run measured no relq@ref. */
export function compareSection(meta: RunMeta, r: BenchResults): string[] {
  const head = r.samples.relq ?? {};
  const ref = r.samples['relq@ref'];
  if (!ref) return [];
  const refName = meta.libs['relq@ref'] ?? 'relq@ref';
  const L: string[] = [];
  L.push(`## relq against ${refName}, same run`, '');
  L.push(
    `Both builds ran in this run on the same server, back to back: processing in turns X Y Y X within each rep ` +
      `(two samples per build and rep), backlogs X Y then Y X from rep to rep, each build on its own queue. ` +
      `"change" is the median of the ratios working tree / ref of these pairs, <sub>min–max</sub>, signed so that ` +
      `a positive change is better; a figure more than ${WORSE_LIMIT * 100} % worse is in bold. Figures measured once per run ` +
      `(idle, round trips) are one sample each. The latency figures come from a run of their own in which ` +
      `the two builds take turns every 0.5 s, each with its own queue (bench/scenarios/latency.ts).`,
    '',
  );
  L.push('| figure | relq (working tree) | relq@ref | change |', '| --- | --- | --- | --- |');
  const worse: string[] = [];
  let compared = 0;
  for (const metric of Object.keys(head)) {
    const d = describe(metric);
    const a = head[metric] ?? [];
    const b = ref[metric] ?? [];
    if (!d || a.length === 0 || b.length === 0) continue;
    compared++;
    // the ratios of pairs measured back to back; else (unequal counts) the ratio of the medians
    const ratios = a.length === b.length ? a.map((x, i) => x / b[i]!) : [median(a) / median(b)];
    const gain = (x: number) => (d.better === 'higher' ? x - 1 : 1 / x - 1);
    const gains = ratios.filter(Number.isFinite).map(gain);
    const g = median(gains);
    const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`;
    let change = Number.isFinite(g) ? pct(g) : '–';
    if (gains.length > 1) {
      const [lo, hi] = range(gains);
      change += ` <sub>${pct(lo)} … ${pct(hi)}</sub>`;
    }
    if (g < -WORSE_LIMIT) {
      change = `**${change}**`;
      worse.push(`${d.label} (${pct(g)})`);
    }
    L.push(`| ${d.label} | ${fmt(median(a), d.digits)} | ${fmt(median(b), d.digits)} | ${change} |`);
  }
  L.push('');
  L.push(
    worse.length === 0
      ? `${compared} figures compared; none is more than ${WORSE_LIMIT * 100} % worse than at the ref.`
      : `${compared} figures compared; more than ${WORSE_LIMIT * 100} % worse than at the ref: ${worse.join('; ')}.`,
  );
  L.push('');
  return L;
}
