/**
 * Foreign CPU load: what other processes on the machine (tests, builds and other
 * programs) used while the bench ran, from /proc (Linux only; elsewhere it reports
 * nothing). Busy CPU of the whole machine minus this process and the private Redis.
 */
import { readFileSync } from 'node:fs';

const TICK = 100; // USER_HZ on Linux

function machineBusyTicks(): number | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0); // user..steal
    return total - f[3]! - f[4]!; // minus idle, iowait
  } catch {
    return undefined;
  }
}

function procTicks(pid: number | 'self'): number | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return undefined;
  }
}

interface Reading {
  t: number;
  busy: number;
  /** CPU ticks so far of this process and of each of its own others (the server, child processes) */
  own: Map<number | 'self', number>;
}

/**
 * Own ticks from `a` to `b`: of each process read in `b`, from its reading in `a` (from 0 when it
 * started since). A process gone by `b` counts nothing for the interval (a sum over the
 * processes would drop by all its ticks).
 */
function ownTicks(a: Reading, b: Reading): number {
  let ticks = 0;
  for (const [pid, t] of b.own) ticks += t - (a.own.get(pid) ?? 0);
  return ticks;
}

export class ForeignLoad {
  private timer: NodeJS.Timeout | undefined;
  private last: Reading | undefined;
  /** cores used by other processes, one value per half second */
  readonly series: number[] = [];

  constructor(private readonly pids: () => number[]) {}

  private read(): Reading | undefined {
    const busy = machineBusyTicks();
    if (busy === undefined) return undefined;
    const own = new Map<number | 'self', number>();
    for (const pid of ['self', ...this.pids()] as const) {
      const ticks = procTicks(pid);
      if (ticks !== undefined) own.set(pid, ticks);
    }
    return { t: Date.now(), busy, own };
  }

  start(): void {
    this.last = this.read();
    if (!this.last) return;
    this.timer = setInterval(() => {
      const now = this.read();
      if (!now || !this.last) return;
      const sec = (now.t - this.last.t) / 1000;
      const foreign = (now.busy - this.last.busy - ownTicks(this.last, now)) / TICK / sec;
      this.series.push(Math.max(0, foreign));
      this.last = now;
    }, 500);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Waits (in 0.4 s probes) until other processes use less than `threshold` cores, for
   * at most `maxMs`. Returns the ms waited. Reduces, not removes, interference from
   * other test runs on a shared machine.
   */
  async waitQuiet(threshold: number, maxMs: number): Promise<number> {
    const t0 = Date.now();
    while (Date.now() - t0 < maxMs) {
      const a = this.read();
      await new Promise((r) => setTimeout(r, 400));
      const b = this.read();
      if (!a || !b) return Date.now() - t0;
      const foreign = (b.busy - a.busy - ownTicks(a, b)) / TICK / ((b.t - a.t) / 1000);
      if (foreign < threshold) break;
    }
    return Date.now() - t0;
  }

  /** Mean foreign load (cores) over the samples since index `from`. */
  mean(from = 0): number {
    const xs = this.series.slice(from);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  }
}
