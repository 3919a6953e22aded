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

function procTicks(pid: number | 'self'): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return 0;
  }
}

export class ForeignLoad {
  private timer: NodeJS.Timeout | undefined;
  private last: { t: number; busy: number; own: number } | undefined;
  /** cores used by other processes, one value per half second */
  readonly series: number[] = [];

  constructor(private readonly pids: () => number[]) {}

  private read(): { t: number; busy: number; own: number } | undefined {
    const busy = machineBusyTicks();
    if (busy === undefined) return undefined;
    const own = procTicks('self') + this.pids().reduce((a, p) => a + procTicks(p), 0);
    return { t: Date.now(), busy, own };
  }

  start(): void {
    this.last = this.read();
    if (!this.last) return;
    this.timer = setInterval(() => {
      const now = this.read();
      if (!now || !this.last) return;
      const sec = (now.t - this.last.t) / 1000;
      const foreign = (now.busy - this.last.busy - (now.own - this.last.own)) / TICK / sec;
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
      const foreign = (b.busy - a.busy - (b.own - a.own)) / TICK / ((b.t - a.t) / 1000);
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
