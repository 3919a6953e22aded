/** What every scenario gets from the runner, and the small tools they share. */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Conn, LibName, Producer } from '../adapters.js';
import type { BenchConfig } from '../options.js';
import { makePayload, type Payload } from '../payload.js';
import type { Recorder } from '../recorder.js';
import { Worker, type Queue } from '../../lib/index.js';
import { closeWindow, openWindow } from '../stats.js';
import type { PrivateRedis } from '../redis-server.js';

export interface ScenarioContext {
  cfg: BenchConfig;
  redis: PrivateRedis;
  conn: Conn;
  /** A connection of the bench's own (windows, memory, FLUSHALL). */
  admin: Redis;
  rec: Recorder;
  /** Empties the server and collects garbage between measurements. */
  flush(): Promise<void>;
}

export interface Scenario {
  /** Its name for `--skip`. */
  name: string;
  /**
   * 'before': once, before the reps; 'every rep'; 'first rep': in rep 1 only (a count, not a
   * speed); 'after': once, after the reps. Within a rep, scenarios run in list order.
   */
  when: 'before' | 'every rep' | 'first rep' | 'after';
  /**
   * `libs`: the run's libraries (queues only: without the raw-ioredis floors), in this rep's
   * order; groupmq only where 'grouped' (relq and groupmq: it takes grouped jobs alone).
   */
  libs: 'all' | 'queues' | 'grouped';
  run(ctx: ScenarioContext, libs: LibName[]): Promise<void>;
}

/**
 * The order of the builds of a --ref run in their k-th turn: X Y, then Y X. The build that
 * goes first in a pair of turns was measured 1-7 % slower at p50 with the same build on both
 * sides, so neither may always go first.
 */
export function turnOrder<T>(sides: readonly T[], k: number): readonly T[] {
  return k % 2 === 0 ? sides : [...sides].reverse();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** CPU time of this process so far, in µs. */
export function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Counts completions; resolves at `target`; first/last completion times. */
export class Completions {
  count = 0;
  first = 0;
  last = 0;
  private resolveDone: (() => void) | undefined;
  readonly done: Promise<void>;
  constructor(readonly target: number) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }
  onDone = (): void => {
    const t = performance.now();
    if (this.count === 0) this.first = t;
    this.count += 1;
    this.last = t;
    if (this.count === this.target) this.resolveDone!();
  };
  async wait(what: string, timeoutMs = Math.max(120_000, this.target * 2)): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const to = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${what}: only ${this.count}/${this.target} jobs done after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.done, to]);
    } finally {
      clearTimeout(timer);
    }
  }
  /** Jobs/s between the first and the last completion (startup excluded). */
  rate(): number {
    return ((this.count - 1) * 1000) / (this.last - this.first);
  }
}

/**
 * The machine's monotonic clock in ms (CLOCK_MONOTONIC): the same in every process on it, so
 * a time stamped in one process can be read in another (performance.now() counts from each
 * process's own start).
 */
export function clockMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Adds sent and not yet answered, at most `max`: a producer that outruns Redis then waits for
 * an answer instead of queueing adds in its client until they time out.
 */
class Unanswered {
  private count = 0;
  private freed: (() => void) | undefined;
  private readonly pending: Array<Promise<unknown>> = [];
  constructor(private readonly max: number) {}
  /** Undefined below `max` (adding stays synchronous until it must wait); else resolves at the next answer. */
  room(): Promise<void> | undefined {
    return this.count < this.max ? undefined : new Promise((r) => (this.freed = r));
  }
  send(add: Promise<unknown>): void {
    this.count++;
    this.pending.push(add.finally(this.answered));
  }
  all(): Promise<unknown> {
    return Promise.all(this.pending);
  }
  private readonly answered = (): void => {
    this.count--;
    this.freed?.();
    this.freed = undefined;
  };
}

/**
 * Adds `count` jobs at `rate`/s, numbered from `from`, each stamped with `stamp()` as it is
 * added; resolves when all are added, with the sending time (ms). With `maxInFlight`, an add
 * waits while that many are unanswered: a producer that outruns Redis then adds slower.
 */
export async function addAtRate(p: Producer, from: number, count: number, rate: number, stamp: () => number = () => performance.now(), maxInFlight = Infinity): Promise<number> {
  const interval = 1000 / rate;
  const adds = new Unanswered(maxInFlight);
  const t0 = performance.now();
  let i = 0;
  while (i < count) {
    const now = performance.now();
    while (i < count && t0 + i * interval <= now) {
      const full = adds.room();
      if (full) await full;
      adds.send(p.add(makePayload(from + i, stamp())));
      i++;
    }
    if (i < count) await sleep(Math.max(0, t0 + i * interval - performance.now()));
  }
  const sentMs = performance.now() - t0;
  await adds.all();
  return sentMs;
}

/**
 * Adds jobs one by one as fast as `maxInFlight` unanswered adds allow (finite: adding yields
 * only while it waits), numbered from `from` and stamped with `stamp()`, until `stopped()`;
 * resolves when all are answered, with how many were added and the sending time (ms).
 */
export async function addUntil(p: Producer, from: number, stopped: () => boolean, stamp: () => number, maxInFlight: number): Promise<{ count: number; sentMs: number }> {
  const adds = new Unanswered(maxInFlight);
  const t0 = performance.now();
  let count = 0;
  while (!stopped()) {
    const full = adds.room();
    if (full) {
      await full;
      continue;
    }
    adds.send(p.add(makePayload(from + count, stamp())));
    count++;
  }
  const sentMs = performance.now() - t0;
  await adds.all();
  return { count, sentMs };
}

/** How the jobs of a figure are made: each job's payload by number (default: the 253-byte one). */
export type MakePayload = (seq: number) => Payload;

export function payloads(n: number, from = 0, make: MakePayload = makePayload): Payload[] {
  return Array.from({ length: n }, (_, i) => make(from + i));
}

/** Adds `n` jobs in batches of `batch` (default `cfg.addBatch`), `parallel` batches at a time. */
export async function fill(cfg: BenchConfig, p: Producer, n: number, parallel = 1, make: MakePayload = makePayload, batch = cfg.addBatch): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: parallel }, async () => {
    while (next < n) {
      const from = next;
      const k = Math.min(batch, n - from);
      next += k;
      await p.addBatch(payloads(k, from, make));
    }
  });
  await Promise.all(lanes);
}

/**
 * Drains `n` jobs already in `q` with one relq Worker of 10 slots (the features' own cost
 * scenarios): the time it took and the Redis commands per job, from a commandstats window.
 */
export async function drainOnce(admin: Redis, q: Queue<number>, n: number, what: string): Promise<{ ms: number; cmdsPerJob: number; calls: Record<string, number> }> {
  const done = new Completions(n);
  const w0 = await openWindow(admin);
  const t0 = performance.now();
  const worker = new Worker<number>(q, async () => done.onDone(), { concurrency: 10 });
  await done.wait(what);
  const ms = performance.now() - t0;
  await worker.close();
  const w = await closeWindow(admin, w0);
  return { ms, cmdsPerJob: w.total / n, calls: w.calls };
}
