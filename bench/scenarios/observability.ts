/**
 * The cost of relq's observability: relq processing a pre-filled queue at concurrency 10 with
 * (a) no instrument registered, (b) relq/metrics registered (a private prom-client registry),
 * (c) the OpenTelemetry context manager (AsyncLocalStorage) and W3C propagator set up, relq/tracing
 * not registered: the part of (d) that an app pays for its own tracing, relq or not,
 * (d) relq/tracing registered (a real BasicTracerProvider, batch processor, no-op exporter,
 * W3C propagation, AsyncLocalStorage context). The four alternate over three rounds in one
 * run; each reports its median rate and its ratio to (a). Run it alone with
 * `npm run bench -- --libs relq --skip floor,add,process,latency,latency-load,processes,memory,payloads,idle,monitor,backlog,grouped,schedulers,rate-limited,fleet-limits,metrics-history`.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import type { RelqMetrics } from '../../lib/metrics/index.js';
import type { RelqTracing } from '../../lib/tracing/index.js';
import { ADAPTERS } from '../adapters.js';
import { log } from '../recorder.js';
import { Completions, fill, gc, type Scenario, type ScenarioContext } from './kit.js';

const ROUNDS = 3;
const CONCURRENCY = 10;
type Mode = 'none' | 'metrics' | 'context' | 'tracing';
const MODES: readonly Mode[] = ['none', 'metrics', 'context', 'tracing'];

/** Spans go nowhere, as with an SDK whose backend drops them: the SDK's own work is measured. */
const noopExporter: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => undefined,
};

export const observability: Scenario = {
  name: 'observability',
  when: 'after',
  libs: 'queues',
  async run(ctx, libs) {
    if (!libs.includes('relq')) return;
    const rates: Record<Mode, number[]> = { none: [], metrics: [], context: [], tracing: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of MODES) rates[mode].push(await measure(ctx, mode));
    }
    const base = median(rates.none);
    for (const mode of MODES) {
      const rate = median(rates[mode]);
      ctx.rec.record('relq', `observability.${mode}.rate`, rate);
      ctx.rec.record('relq', `observability.${mode}.ratio`, rate / base);
      log(`obs ${mode.padEnd(8)} relq      ${Math.round(rate)} jobs/s (median of ${ROUNDS}: ${rates[mode].map(Math.round).join(', ')}), ${(rate / base).toFixed(3)} of none`);
    }
  },
};

async function measure({ cfg, conn, flush }: ScenarioContext, mode: Mode): Promise<number> {
  await flush();
  const stop = await instrument(mode); // before the fill: traced jobs carry their context, as in production
  try {
    const p = await ADAPTERS.relq.producer(conn);
    await fill(cfg, p, cfg.n);
    await p.close();
    gc();
    const done = new Completions(cfg.n);
    const consumer = await ADAPTERS.relq.consumer(conn, CONCURRENCY, { onDone: done.onDone });
    await done.wait(`observability ${mode}`);
    await consumer.close();
    return done.rate();
  } finally {
    await stop();
  }
}

// Loaded when the scenario runs, so that `--ref` of a lib/ without them still compiles and runs the rest.
const loadMetrics = async (): Promise<typeof RelqMetrics> => (await import('../../lib/metrics/index.js')).RelqMetrics;
const loadTracing = async (): Promise<typeof RelqTracing> => (await import('../../lib/tracing/index.js')).RelqTracing;

async function instrument(mode: Mode): Promise<() => Promise<void>> {
  if (mode === 'metrics') {
    const metrics = new (await loadMetrics())({ registry: new Registry() });
    return async () => metrics.close();
  }
  if (mode === 'context' || mode === 'tracing') {
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    if (mode === 'context') {
      // the SDK's context manager alone (AsyncLocalStorage): what every promise of the process
      // pays once an app sets it up, with or without relq/tracing
      return async () => {
        context.disable();
        propagation.disable();
      };
    }
    const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopExporter)] });
    const tracing = new (await loadTracing())({ tracerProvider: provider });
    return async () => {
      tracing.close();
      await provider.shutdown();
      context.disable();
      propagation.disable();
    };
  }
  return async () => undefined;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
