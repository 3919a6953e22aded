/**
 * The RESULTS.md section of a `--ref` run: every figure of the working tree's relq against
 * the same figure of relq@ref, measured in the same run. The builds' samples pair up: adds and
 * processing by neighbouring turns (add-turns.ts, process-turns.ts), latency by rep from a run in
 * which the two take turns (latency.ts), backlogs from drains that alternate; a figure's change is
 * the median of its pairs' ratios, so drift of the machine cancels out.
 */
import type { BenchResults, RunMeta } from './results.js';
import { fmt, median, range } from './stats.js';

/** How much worse than relq@ref a figure may be before the section flags it. */
export const WORSE_LIMIT = 0.05;

type Direction = 'higher' | 'lower';

/** Figure label, digits and which way is better, by metric name (metrics not listed are not compared). */
function describe(metric: string): { label: string; digits: number; better: Direction } | undefined {
  // adds and processing: the runs in which the two builds take turns (add-turns.ts, process-turns.ts)
  const phase: Record<string, string> = {
    addTurnsOne: 'add, one by one, builds taking turns',
    addTurnsBatch: 'add, batches of 1,000, builds taking turns',
    procTurns1: 'process, c=1, builds taking turns',
    procTurns10: 'process, c=10, builds taking turns',
    procTurns50: 'process, c=50, builds taking turns',
    procTurnsBatch: 'process, BatchWorker, builds taking turns',
  };
  const [p, what] = metric.split('.') as [string, string | undefined];
  if (phase[p] && what === 'rate') return { label: `${phase[p]}: jobs/s`, digits: 0, better: 'higher' };
  if (phase[p] && what === 'cmds') return { label: `${phase[p]}: Redis commands per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'redisCpuUs') return { label: `${phase[p]}: Redis CPU µs per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'scriptUs') return { label: `${phase[p]}: µs in scripts per job`, digits: 2, better: 'lower' };
  if (phase[p] && what === 'nodeCpuUs') return { label: `${phase[p]}: Node CPU µs per job`, digits: 2, better: 'lower' };
  // latency: the run in which the two builds take turns (bench/scenarios/latency.ts)
  // the tail: each turn's p99, median over the turns (a pooled p99 follows a few stalls; see latency.ts)
  if (p === 'latTurns' && (what === 'p50' || what === 'p95')) return { label: `latency ${what} at a steady rate, builds taking turns (ms)`, digits: 3, better: 'lower' };
  if (metric === 'latTurns.p99turn') return { label: 'latency p99 of each 0.5 s turn, median over the turns (ms)', digits: 3, better: 'lower' };
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

/**
 * The ratios working tree / ref of one figure: per pair of neighbouring turns where the run
 * kept each turn (`byTurn`: a figure of two builds a few hundred ms apart, so that the machine's
 * drift between reps and within a rep cancels out); else per rep where both have one sample per
 * rep; else the ratio of the medians.
 */
export function pairedRatios(
  a: number[],
  b: number[],
  turnsA: number[] | undefined,
  turnsB: number[] | undefined,
): { ratios: number[]; byTurn: boolean } {
  if (turnsA && turnsB && turnsA.length === turnsB.length && turnsA.length > 1) {
    return { ratios: turnsA.map((x, i) => x / turnsB[i]!), byTurn: true };
  }
  if (a.length === b.length) return { ratios: a.map((x, i) => x / b[i]!), byTurn: false };
  return { ratios: [median(a) / median(b)], byTurn: false };
}

/** The first and third quartiles of `xs` (linear interpolation). */
export function quartiles(xs: number[]): [number, number] {
  const s = [...xs].sort((x, y) => x - y);
  const at = (q: number) => {
    const pos = (s.length - 1) * q;
    const lo = Math.floor(pos);
    return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (pos - lo);
  };
  return [at(0.25), at(0.75)];
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
    `Both builds ran in this run on the same server. Adds, processing and latency are compared from runs in which the ` +
      `two builds take turns, each with its own queue: twenty turns each of N/20 adds per rep (bench/scenarios/add-turns.ts), ` +
      `ten turns each per rep for processing, each with its own worker, of N/10 jobs at c=1 and more where jobs go faster (4× at c=10, 6× at c=50, 8× for BatchWorker: a turn lasts a few hundred ms) ` +
      `(bench/scenarios/process-turns.ts), turns of 0.5 s at a steady rate for latency (bench/scenarios/latency.ts), ` +
      `whose tail is each turn's p99, median over the turns; before each turn a full GC, then a few jobs (adds) of that build ` +
      `unmeasured, which compile again the code the GC dropped; the ref build also runs alone, unrecorded, wherever the ` +
      `working tree's does, so that both come to their turns with the same history; backlogs drain by drain, X Y then Y X ` +
      `(bench/scenarios/backlog.ts). "change" is, for adds, processing and the latency tail, the median of the ratios working tree / ref ` +
      `of each pair of neighbouring turns, <sub>first–third quartile</sub>, and for the other figures the median of the ` +
      `per-rep ratios, <sub>min–max</sub>; signed so that a positive change is better; a figure more than ${WORSE_LIMIT * 100} % ` +
      `worse is in bold. Figures measured once per run (idle, round trips) are one sample each.`,
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
    const { ratios, byTurn } = pairedRatios(a, b, r.turns?.relq?.[metric], r.turns?.['relq@ref']?.[metric]);
    const gain = (x: number) => (d.better === 'higher' ? x - 1 : 1 / x - 1);
    const gains = ratios.filter(Number.isFinite).map(gain);
    const g = median(gains);
    const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`;
    let change = Number.isFinite(g) ? pct(g) : '–';
    if (gains.length > 1) {
      const [lo, hi] = byTurn ? quartiles(gains) : range(gains);
      change += ` <sub>${pct(lo)} … ${pct(hi)}</sub>`;
    }
    if (byTurn) change += ` (${gains.length} turns)`;
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
