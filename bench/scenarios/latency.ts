/**
 * Latency at a steady rate: `cfg.latencyRate` adds per second for `cfg.latencySec` to a worker
 * at concurrency `cfg.latencyConcurrency`; from add to handler start, after a warm-up tenth.
 *
 * With --ref, the two relq builds are also measured together for their comparison ('latTurns'
 * figures): each has its own queue, producer and worker, and they take turns every SLICE_SEC.
 * A latency run's tail follows whatever else the machine does during it: back-to-back runs of
 * 10 s differed by up to 45 % at p99 with the same build on both sides, where taking turns
 * keeps them within a few %. The solo run of the working tree's build still gives relq's
 * latency beside the other libraries' (taking turns adds to both builds' latency).
 *
 * The paired run's tail figure is 'latTurns.p99turn': each turn's p99, median over the
 * turns. The p99 of all a build's samples of a rep is moved by one stall of the machine
 * during a few of that build's turns (per-rep ratios from -29 % to +143 % in one run of
 * 10 s per build); a turn's p99 holds only that turn's stalls, and the median over the
 * turns leaves out the few turns that met one. The pooled p99 is still recorded. Each
 * build runs `cfg.latencyTurnsSec` (30 s) in turns per rep: with 10 s, per-rep ratios of
 * the same build on both sides still spread over ±10-20 % at p99.
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, buildQueueName, type Conn, type LibName, type Producer, type RelqName } from '../adapters.js';
import { log } from '../recorder.js';
import { closeWindow, median, openWindow, percentile, snapshot, WindowTally, type WindowStats } from '../stats.js';
import { addAtRate, Completions, cpuUs, gc, sleep, turnOrder, type Scenario, type ScenarioContext } from './kit.js';

/** Jobs each build runs unmeasured after the GC that precedes each of its turns. */
const REWARM_JOBS = 20;
/** Length of one turn of a build in the paired run. */
const SLICE_SEC = 0.5;

export const latency: Scenario = {
  name: 'latency',
  when: 'every rep',
  libs: 'all',
  async run(ctx, libs) {
    const builds = libs.filter((l): l is RelqName => l === 'relq' || l === 'relq@ref');
    // with --ref the ref build runs alone too, unrecorded: both builds come to their turns with
    // the same history in this process (bench/scenarios/process.ts)
    for (const name of libs) await latencyOnce(ctx, name, name !== 'relq@ref' || builds.length < 2);
    if (builds.length === 2) await latencyInTurns(ctx, builds);
  },
};

interface Figures {
  lat: number[];
  /** The paired run's p99 of each turn. */
  turnP99?: number[];
  jobs: number;
  sentMs: number;
  wallMs: number;
  nodeCpuUs: number;
  w: WindowStats;
}

function recordFigures({ rec }: ScenarioContext, name: LibName, phase: 'lat' | 'latTurns', f: Figures, how: string): void {
  const lat = f.lat.sort((a, b) => a - b);
  rec.record(name, `${phase}.p50`, percentile(lat, 50));
  rec.record(name, `${phase}.p95`, percentile(lat, 95));
  rec.record(name, `${phase}.p99`, percentile(lat, 99));
  if (f.turnP99) {
    rec.record(name, `${phase}.p99turn`, median(f.turnP99));
    rec.recordTurnValues(name, `${phase}.p99turn`, f.turnP99); // compared turn against turn (bench/compare.ts)
  }
  rec.record(name, `${phase}.rate`, (f.jobs * 1000) / f.sentMs);
  rec.record(name, `${phase}.nodeCpuPct`, (f.nodeCpuUs / 1000 / f.wallMs) * 100);
  rec.record(name, `${phase}.redisCpuPct`, ((f.w.redisCpuSec * 1000) / f.wallMs) * 100);
  rec.record(name, `${phase}.cmds`, f.w.total / f.jobs);
  if (phase === 'lat') rec.recordBreakdown(name, phase, f.jobs, f.w);
  log(
    `latency  ${name.padEnd(9)} p50 ${percentile(lat, 50).toFixed(3)} p95 ${percentile(lat, 95).toFixed(3)} p99 ${percentile(lat, 99).toFixed(3)} ms${f.turnP99 ? ` (p99 per turn, median ${median(f.turnP99).toFixed(3)})` : ''} at ${Math.round((f.jobs * 1000) / f.sentMs)}/s${how}`,
  );
}

async function latencyOnce(ctx: ScenarioContext, name: LibName, reported: boolean): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  await flush();
  const total = Math.round(cfg.latencyRate * cfg.latencySec);
  const warmup = Math.max(50, Math.round(total / 10));
  const lat: number[] = [];
  const done = new Completions(total);
  const consumer = await ADAPTERS[name].consumer(conn, cfg.latencyConcurrency, {
    onDone: done.onDone,
    onStart: (d) => {
      if (d.seq >= warmup) lat.push(performance.now() - d.ts);
    },
  });
  const p = await ADAPTERS[name].producer(conn);
  await sleep(300);
  gc();
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, 'lat');
  const c0 = cpuUs();
  const t0 = performance.now();
  const sentMs = await addAtRate(p, 0, total, cfg.latencyRate);
  await done.wait(`latency ${name}`);
  const wallMs = performance.now() - t0;
  const nodeCpuUs = cpuUs() - c0;
  lm();
  const w = await closeWindow(admin, w0);
  await consumer.close();
  await p.close();
  if (reported) recordFigures(ctx, name, 'lat', { lat, jobs: total, sentMs, wallMs, nodeCpuUs, w }, '');
}

/** One build's side of the run in turns: its queue, its producer and worker, what its turns measured. */
interface Side {
  name: RelqName;
  producer: Producer;
  consumer: { close(): Promise<void> };
  lat: number[];
  /** p99 of each measured turn. */
  turnP99: number[];
  /** Completions of the current turn (its worker's hooks count into it). */
  turn: { done: Completions };
  sentMs: number;
  wallMs: number;
  nodeCpuUs: number;
  redis: WindowTally;
}

async function latencyInTurns(ctx: ScenarioContext, names: RelqName[]): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  await flush();
  const total = Math.round(cfg.latencyRate * cfg.latencyTurnsSec);
  const warmup = Math.max(50, Math.round((cfg.latencyRate * cfg.latencySec) / 10));
  const perTurn = Math.max(1, Math.round(cfg.latencyRate * SLICE_SEC));
  const sides: Side[] = [];
  for (const name of names) {
    const own: Conn = { ...conn, queue: buildQueueName(name) };
    const lat: number[] = [];
    const turn = { done: new Completions(warmup) };
    const consumer = await ADAPTERS[name].consumer(own, cfg.latencyConcurrency, {
      onDone: () => turn.done.onDone(),
      onStart: (d) => {
        if (d.seq >= warmup) lat.push(performance.now() - d.ts);
      },
    });
    const producer = await ADAPTERS[name].producer(own);
    sides.push({ name, producer, consumer, lat, turnP99: [], turn, sentMs: 0, wallMs: 0, nodeCpuUs: 0, redis: new WindowTally() });
  }
  // warm-up, not measured: each build in turn
  for (const side of sides) {
    await addAtRate(side.producer, 0, warmup, cfg.latencyRate);
    await side.turn.done.wait(`latency warm-up ${side.name}`);
  }
  await sleep(300);
  gc();
  await rec.quiet();
  const marks = sides.map((s) => rec.loadMark(s.name, 'latTurns'));
  for (let from = warmup, k = 0; from < warmup + total; from += perTurn, k++) {
    const count = Math.min(perTurn, warmup + total - from);
    for (const side of turnOrder(sides, k)) {
      // The other build's garbage is collected before, not charged to this turn; a full GC also
      // drops optimized code, which a few unmeasured jobs (negative numbers: not sampled)
      // compile again (bench/scenarios/process-turns.ts)
      gc();
      side.turn.done = new Completions(REWARM_JOBS);
      await addAtRate(side.producer, -REWARM_JOBS * (k + 2), REWARM_JOBS, cfg.latencyRate * 4);
      await side.turn.done.wait(`latency re-warm ${side.name}`);
      side.turn.done = new Completions(count);
      const seen = side.lat.length;
      const s0 = await snapshot(admin);
      const c0 = cpuUs();
      const t0 = performance.now();
      side.sentMs += await addAtRate(side.producer, from, count, cfg.latencyRate);
      await side.turn.done.wait(`latency ${side.name}`);
      side.wallMs += performance.now() - t0;
      side.nodeCpuUs += cpuUs() - c0;
      side.redis.add(s0, await snapshot(admin));
      side.turnP99.push(percentile(side.lat.slice(seen).sort((a, b) => a - b), 99));
    }
  }
  for (const mark of marks) mark();
  for (const side of sides) {
    await side.consumer.close();
    await side.producer.close();
  }
  for (const side of sides) {
    const w = side.redis.stats;
    recordFigures(ctx, side.name, 'latTurns', { lat: side.lat, turnP99: side.turnP99, jobs: total, sentMs: side.sentMs, wallMs: side.wallMs, nodeCpuUs: side.nodeCpuUs, w }, ` (turns of ${SLICE_SEC} s with ${sides.find((s) => s !== side)!.name})`);
  }
}
