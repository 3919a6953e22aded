/**
 * The two relq builds of a --ref run adding in turns ('addTurnsOne', 'addTurnsBatch' figures,
 * compared in bench/compare.ts): each build adds to its own queue; they take `cfg.addTurns` turns
 * each (20; X Y Y X X Y ...), a turn adding `cfg.n / cfg.addTurns` jobs one by one, or five times as many in
 * batches. A build's
 * figures are its turns' sums: time, Node CPU, and what Redis did over each turn.
 *
 * Whole runs of 20,000 adds, one build after the other, flagged the same build against itself
 * by 5 % (add one by one, A/A with 5 reps); turns let both builds meet the same state of the
 * machine, as processing's turns do (process-turns.ts).
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, buildQueueName, type Producer, type RelqName } from '../adapters.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { snapshot, WindowTally } from '../stats.js';
import { cpuUs, gc, payloads, turnOrder, type ScenarioContext } from './kit.js';

/** Single adds each build makes unmeasured after the GC that precedes each of its turns. */
const REWARM_ADDS = 50;
/**
 * Batches add this many times N in turns: N/20 jobs are one batch call of about 10 ms, and
 * single calls that short spread over ±10 % with the same build on both sides.
 */
const BATCH_JOBS_PER_N = 5;

interface Side {
  name: RelqName;
  producer: Producer;
  ms: number;
  nodeCpuUs: number;
  redis: WindowTally;
}

/** Adds in turns, `phase` 'addOne' (awaited one by one) or 'addBatch' (batches of `cfg.addBatch`). */
export async function addInTurns(ctx: ScenarioContext, names: RelqName[], phase: 'addOne' | 'addBatch'): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  await flush();
  const turns = cfg.addTurns;
  const perTurn = Math.ceil((phase === 'addBatch' ? cfg.n * BATCH_JOBS_PER_N : cfg.n) / turns);
  const jobs = payloads(perTurn * turns);
  const addAll = async (p: Producer, from: number): Promise<void> => {
    if (phase === 'addOne') for (let i = from; i < from + perTurn; i++) await p.add(jobs[i]!);
    else for (let i = from; i < from + perTurn; i += cfg.addBatch) await p.addBatch(jobs.slice(i, Math.min(i + cfg.addBatch, from + perTurn)));
  };
  const sides: Side[] = [];
  for (const name of names) {
    const producer = await ADAPTERS[name].producer({ ...conn, queue: buildQueueName(name) });
    await producer.addBatch(payloads(Math.min(perTurn, 1000), -perTurn)); // loads the scripts, warms the connection
    sides.push({ name, producer, ms: 0, nodeCpuUs: 0, redis: new WindowTally() });
  }
  gc();
  await rec.quiet();
  const metric = phase.replace('add', 'addTurns');
  const marks = sides.map((s) => rec.loadMark(s.name, metric));
  for (let t = 0; t < turns; t++) {
    for (const side of turnOrder(sides, t)) {
      // The other build's garbage is collected before, not charged to this turn; a full GC also
      // drops optimized code, which a few unmeasured adds compile again (process-turns.ts)
      gc();
      const rewarm = payloads(phase === 'addOne' ? REWARM_ADDS : cfg.addBatch, -(t + 2) * cfg.addBatch);
      if (phase === 'addOne') for (const j of rewarm) await side.producer.add(j);
      else await side.producer.addBatch(rewarm);
      const s0 = await snapshot(admin);
      const c0 = cpuUs();
      const t0 = performance.now();
      await addAll(side.producer, t * perTurn);
      const ms = performance.now() - t0;
      const cpu = cpuUs() - c0;
      const s1 = await snapshot(admin);
      const own = new WindowTally();
      own.add(s0, s1);
      side.ms += ms;
      side.nodeCpuUs += cpu;
      side.redis.add(s0, s1);
      rec.recordTurn(side.name, metric, perTurn, ms, own.stats, cpu);
    }
  }
  for (const mark of marks) mark();
  for (const side of sides) {
    await side.producer.close();
    const n = perTurn * turns;
    const rate = (n * 1000) / side.ms;
    rec.record(side.name, `${metric}.rate`, rate);
    rec.recordWindow(side.name, metric, n, side.redis.stats, side.nodeCpuUs);
    log(`${metric.padEnd(8)} ${side.name.padEnd(9)} ${Math.round(rate)} jobs/s in ${turns} turns, ${(side.redis.stats.total / n).toFixed(2)} cmds/job, node ${(side.nodeCpuUs / n).toFixed(1)} µs/job`);
  }
}

export type { Payload };
