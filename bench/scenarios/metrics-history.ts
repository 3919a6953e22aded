/**
 * The cost of a queue's metrics history (queue option `metrics`): relq processing a pre-filled
 * queue at concurrency 10 without it and with it (each settle call then adds a few HINCRBY
 * to the minute's hash). The two alternate over three rounds in one run; each reports its
 * median rate and its ratio to the queue without it. Run it alone with
 * `npm run bench -- --libs relq --skip floor,add,process,latency,latency-load,processes,memory,idle,monitor,backlog,schedulers,rate-limited,fleet-limits,observability`.
 */
import { Queue, Worker } from '../../lib/index.js';
import { ADAPTERS, QUEUE_NAME, RELQ_QUEUE_OPTIONS } from '../adapters.js';
import type { Payload } from '../payload.js';
import { log } from '../recorder.js';
import { Completions, fill, gc, type Scenario, type ScenarioContext } from './kit.js';

const ROUNDS = 3;
const CONCURRENCY = 10;
type Mode = 'off' | 'kept';

export const metricsHistory: Scenario = {
  name: 'metrics-history',
  when: 'after',
  libs: 'queues',
  async run(ctx, libs) {
    if (!libs.includes('relq')) return;
    const rates: Record<Mode, number[]> = { off: [], kept: [] };
    for (let round = 0; round < (ctx.cfg.quick ? 1 : ROUNDS); round++) {
      for (const mode of ['off', 'kept'] as const) rates[mode].push(await measure(ctx, mode));
    }
    const base = median(rates.off);
    for (const mode of ['off', 'kept'] as const) {
      const rate = median(rates[mode]);
      ctx.rec.record('relq', `metricsHistory.${mode}.rate`, rate);
      ctx.rec.record('relq', `metricsHistory.${mode}.ratio`, rate / base);
      log(`metrics ${mode.padEnd(5)} relq   ${Math.round(rate)} jobs/s (median of ${ROUNDS}: ${rates[mode].map(Math.round).join(', ')}), ${(rate / base).toFixed(3)} of off`);
    }
  },
};

async function measure({ cfg, conn, flush }: ScenarioContext, mode: Mode): Promise<number> {
  await flush(); // FLUSHALL: a round without the option finds none stored by the last one
  const p = await ADAPTERS.relq.producer(conn);
  await fill(cfg, p, cfg.n);
  await p.close();
  gc();
  // the worker's Queue stores the option before its first lease
  const q = new Queue<Payload, unknown>(conn.queue ?? QUEUE_NAME, {
    connection: { host: conn.host, port: conn.port },
    ...RELQ_QUEUE_OPTIONS,
    ...(mode === 'kept' ? { metrics: true } : {}),
  });
  const done = new Completions(cfg.n);
  const w = new Worker<Payload, unknown>(q, async () => undefined, { concurrency: CONCURRENCY });
  const sub = w.events.subscribe((e) => {
    if (e.type === 'completed') done.onDone();
    else if (e.type === 'error') console.error('relq worker error', e.error);
  });
  try {
    await done.wait(`metrics-history ${mode}`);
  } finally {
    await w.close();
    sub.unsubscribe();
    await q.close();
  }
  return done.rate();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
