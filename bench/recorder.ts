/**
 * Where a run's measurements go: samples per library and metric, the per-command breakdown,
 * the redis-benchmark floor and notes (bench/report.ts and results.json read them), the
 * foreign load on the machine during each measurement, and the progress log on stderr.
 */
import { ForeignLoad } from './load.js';
import type { BenchResults } from './results.js';
import type { WindowStats } from './stats.js';

const t0Run = Date.now();

/** A progress line on stderr, stamped with the seconds since the run started. */
export function log(msg: string): void {
  const s = ((Date.now() - t0Run) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${s}s] ${msg}\n`);
}

export class Recorder {
  readonly results: BenchResults = { samples: {}, breakdown: {}, floor: {}, notes: [] };
  private load: ForeignLoad | undefined;
  private quietWaitedMs = 0;

  /** @param quietBudgetMs how long, in all, quiet() may wait for a quieter machine */
  constructor(private readonly quietBudgetMs: number) {}

  record(lib: string, metric: string, value: number): void {
    ((this.results.samples[lib] ??= {})[metric] ??= []).push(value);
  }

  /** Commands, Redis CPU and Node CPU per job of one measured window, and its command breakdown. */
  recordWindow(lib: string, phase: string, jobs: number, w: WindowStats, nodeCpuUs: number): void {
    for (const [what, value] of Object.entries(windowFigures(jobs, w, nodeCpuUs))) this.record(lib, `${phase}.${what}`, value);
    this.recordBreakdown(lib, phase, jobs, w);
  }

  /**
   * One turn of a run in which the relq builds take turns: its rate and per-job figures, kept
   * apart from the per-rep samples so that compare.ts can pair each turn with the other
   * build's neighbouring one.
   */
  recordTurn(lib: string, phase: string, jobs: number, ms: number, w: WindowStats, nodeCpuUs: number): void {
    const figures = { rate: (jobs * 1000) / ms, ...windowFigures(jobs, w, nodeCpuUs) };
    for (const [what, value] of Object.entries(figures)) this.recordTurnValues(lib, `${phase}.${what}`, [value]);
  }

  /** One figure of each turn, in the order the turns ran (latency: each turn's p99). */
  recordTurnValues(lib: string, metric: string, values: readonly number[]): void {
    const byMetric = ((this.results.turns ??= {})[lib] ??= {});
    (byMetric[metric] ??= []).push(...values);
  }

  /** Calls per job of each command in one measured window (the last rep's is kept). */
  recordBreakdown(lib: string, phase: string, jobs: number, w: WindowStats): void {
    const perJob: Record<string, number> = {};
    for (const [k, v] of Object.entries(w.calls)) perJob[k] = v / jobs;
    (this.results.breakdown[lib] ??= {})[phase] = perJob;
  }

  /** Starts sampling the CPU that other processes than these (and this one) use. */
  watchLoad(ownPids: () => number[]): void {
    this.load = new ForeignLoad(ownPids);
    this.load.start();
  }

  /** Waits for a quieter machine before a measurement, within the run's budget. */
  async quiet(): Promise<void> {
    if (!this.load || this.quietWaitedMs >= this.quietBudgetMs) return;
    this.quietWaitedMs += await this.load.waitQuiet(0.3, Math.min(8000, this.quietBudgetMs - this.quietWaitedMs));
  }

  /** Marks the start of a measurement; call the result at its end to record the foreign load. */
  loadMark(lib: string, phase: string): () => void {
    const from = this.load?.series.length ?? 0;
    return () => {
      const x = this.load?.mean(from) ?? NaN;
      if (Number.isFinite(x)) this.record(lib, `${phase}.foreign`, x);
    };
  }

  /** Stops load sampling; keeps its series and a note on the time quiet() waited. */
  finish(): void {
    this.load?.stop();
    if (this.load) this.results.foreign = this.load.series;
    if (this.quietWaitedMs > 0) {
      this.results.notes.push(
        `The bench waited ${(this.quietWaitedMs / 1000).toFixed(0)} s in all (budget ${this.quietBudgetMs / 1000} s) for other processes to go below 0.3 cores before measurements.`,
      );
    }
  }
}

/** Per job of one window: commands, Redis CPU, Node CPU and, where scripts ran, µs inside them. */
function windowFigures(jobs: number, w: WindowStats, nodeCpuUs: number): Record<string, number> {
  const out: Record<string, number> = { cmds: w.total / jobs, redisCpuUs: (w.redisCpuSec * 1e6) / jobs, nodeCpuUs: nodeCpuUs / jobs };
  // Time inside scripts (Lua only, from INFO commandstats): steadier than CPU, which also
  // counts the server's network work and whatever else the machine does.
  const scriptUs = ['fcall', 'fcall_ro', 'evalsha', 'eval'].reduce((sum, cmd) => sum + (w.usec[cmd] ?? 0), 0);
  if (scriptUs > 0) out.scriptUs = scriptUs / jobs;
  return out;
}
