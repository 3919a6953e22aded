/**
 * The two relq builds of a --ref run processing in turns ('procTurns' figures, compared in
 * bench/compare.ts): each build has its own paused queue, pre-filled, and its own worker;
 * they take `cfg.procTurns` turns each (10) (X Y Y X X Y ...), and a turn resumes one queue until its
 * worker completed `cfg.n / cfg.procTurns` more jobs (times TURN_SCALE), then pauses it and waits until nothing is
 * leased. A turn's time runs from the resume to that last completion; CPU and Redis
 * figures are taken over the same span.
 *
 * Whole drains of 20,000 jobs, one build after the other, differed by ±15 % between back
 * to back runs of the same build, more than the 5 % a comparison must resolve; turns of a
 * few hundred ms let both builds meet the same state of the machine.
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, buildQueueName, RELQ_LIBS, RELQ_QUEUE_OPTIONS, type Conn, type Consumer, type RelqName } from '../adapters.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { snapshot, WindowTally } from '../stats.js';
import { cpuUs, fill, gc, sleep, turnOrder, type ScenarioContext } from './kit.js';

/**
 * Jobs per turn, in multiples of N / turns, by phase: the faster a phase, the more jobs a turn
 * takes, so that every turn lasts a few hundred ms. Turns of 30 ms (2,000 jobs of a
 * BatchWorker) measured their resume and pause as much as the work: one build's turns spread
 * over ±15 % against the other's.
 */
const TURN_SCALE: Record<string, number> = { proc1: 1, proc10: 4, proc50: 6, procBatch: 8 };
/** A turn that has not reached its count by then fails the run (instead of hanging it). */
const TURN_TIMEOUT_MS = 60_000;

/** One build's side: its queue, its worker, what its turns measured. */
interface Side {
  name: RelqName;
  queue: { pause(): Promise<void>; resume(): Promise<void>; counts(): Promise<{ working: number }>; close(): Promise<void> };
  consumer: Consumer;
  /** Completions so far, and what waits for the next count. */
  done: number;
  waiter?: { at: number; resolve(t: number): void };
  jobs: number;
  ms: number;
  nodeCpuUs: number;
  redis: WindowTally;
}

/**
 * Measures `phase` ('proc<c>' or 'procBatch') of both builds in turns; `start` starts a
 * build's worker on its own queue (the adapters' consumer or batch consumer).
 */
export async function processInTurns(
  ctx: ScenarioContext,
  names: RelqName[],
  phase: string,
  start: (name: RelqName, conn: Conn, hooks: { onDone(): void }) => Promise<Consumer>,
): Promise<void> {
  const { cfg, conn, admin, rec, flush } = ctx;
  await flush();
  const turns = cfg.procTurns;
  const perTurn = Math.ceil((cfg.n * (TURN_SCALE[phase] ?? 1)) / turns);
  const warmup = Math.min(perTurn, 1000);
  // every turn's overflow (jobs leased before the pause: about 500 in batch mode) is processed unmeasured
  const total = warmup + Math.ceil(perTurn * 1.1) * turns + (2 * turns + 1) * 2000;
  const metric = phase.replace('proc', 'procTurns');
  const sides: Side[] = [];
  for (const name of names) {
    const own: Conn = { ...conn, queue: buildQueueName(name) };
    const queue = new RELQ_LIBS[name]!.Queue<Payload, unknown>(own.queue!, { connection: { host: conn.host, port: conn.port }, ...RELQ_QUEUE_OPTIONS });
    await queue.pause();
    const producer = await ADAPTERS[name].producer(own);
    await fill(cfg, producer, total, 4);
    await producer.close();
    const count: Pick<Side, 'done' | 'waiter'> = { done: 0 };
    const consumer = await start(name, own, {
      onDone: () => {
        count.done += 1;
        if (count.waiter && count.done >= count.waiter.at) {
          const w = count.waiter;
          count.waiter = undefined;
          w.resolve(performance.now());
        }
      },
    });
    // the hook above counts into the side itself
    const side: Side = Object.assign(count, { name, queue, consumer, jobs: 0, ms: 0, nodeCpuUs: 0, redis: new WindowTally() });
    sides.push(side);
  }
  /** Resumes the side's queue until `jobs` more completed; `measured`: adds the span to its figures. */
  const turn = async (side: Side, jobs: number, measured: boolean): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const reached = new Promise<number>((resolve, reject) => {
      const at = side.done + jobs;
      side.waiter = { at, resolve };
      const stuck = (c: unknown) => reject(new Error(`${phase} ${side.name}: ${side.done} of ${at} jobs done after ${TURN_TIMEOUT_MS} ms (counts ${JSON.stringify(c)})`));
      timer = setTimeout(() => void side.queue.counts().then(stuck, stuck), TURN_TIMEOUT_MS);
    });
    const s0 = measured ? await snapshot(admin) : undefined;
    const c0 = cpuUs();
    const t0 = performance.now();
    await side.queue.resume();
    const t1 = await reached.finally(() => clearTimeout(timer));
    if (s0) {
      const cpu = cpuUs() - c0;
      const s1 = await snapshot(admin);
      const own = new WindowTally();
      own.add(s0, s1);
      side.redis.add(s0, s1);
      side.nodeCpuUs += cpu;
      side.ms += t1 - t0;
      side.jobs += jobs;
      rec.recordTurn(side.name, metric, jobs, t1 - t0, own.stats, cpu);
    }
    await side.queue.pause();
    // the jobs leased before the pause finish unmeasured
    while ((await side.queue.counts()).working > 0) await sleep(2);
  };
  for (const side of sides) await turn(side, warmup, false);
  gc();
  await rec.quiet();
  const marks = sides.map((s) => rec.loadMark(s.name, metric));
  const rewarm = Math.ceil(perTurn / 10);
  for (let t = 0; t < turns; t++) {
    for (const side of turnOrder(sides, t)) {
      // The other build's garbage is collected before, not charged to this turn; a full GC
      // also drops optimized code (V8: dependencies on weak objects), which a short unmeasured
      // turn compiles again, so that the measured turn runs what the other build's ran
      gc();
      await turn(side, rewarm, false);
      await turn(side, perTurn, true);
    }
  }
  for (const mark of marks) mark();
  for (const side of sides) {
    await side.consumer.close();
    await side.queue.close();
  }
  for (const side of sides) {
    const rate = (side.jobs * 1000) / side.ms;
    rec.record(side.name, `${metric}.rate`, rate);
    rec.recordWindow(side.name, metric, side.jobs, side.redis.stats, side.nodeCpuUs);
    log(`${metric.padEnd(8)} ${side.name.padEnd(9)} ${Math.round(rate)} jobs/s in ${turns} turns, ${(side.redis.stats.total / side.jobs).toFixed(2)} cmds/job, node ${(side.nodeCpuUs / side.jobs).toFixed(1)} µs/job`);
  }
}
