/**
 * What observability costs Redis: nothing. Registered metrics and tracing send no command of
 * their own on the add, lease and ack path (tracing only makes the stored meta longer), and
 * with none registered the stored job is exactly what it was.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import type { Queue } from '../../lib/index.js';
import { RelqMetrics } from '../../lib/metrics/index.js';
import { RelqTracing } from '../../lib/tracing/index.js';
import { commandStats, statsDelta, useRedis } from '../support/engine-harness.js';

const res = useRedis();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  await provider.shutdown();
  context.disable();
  propagation.disable();
});

/** Commands Redis ran for: 3 adds, one lease of 3, their acks (lease and settle scripts, with what they run inside). */
async function oneRound(q: Queue<string>): Promise<Record<string, number>> {
  const obs = res.client();
  await q.counts(); // scripts loaded, connection up
  const before = await commandStats(obs);
  for (const data of ['a', 'b', 'c']) await q.add(data);
  const leases = await q.lease({ count: 3 });
  for (const lease of leases) await q.ack(lease, 'ok');
  const delta = statsDelta(before, await commandStats(obs));
  delete delta.info; // the reading itself
  return delta;
}

test('registered metrics and tracing add no Redis command to adds, leases and acks', async () => {
  const plain = await oneRound(res.queue<string>('plain'));
  expect(plain.fcall ?? plain.evalsha).toBeGreaterThan(0);
  const metrics = new RelqMetrics({ registry: new Registry() });
  const tracing = new RelqTracing({ tracerProvider: provider });
  try {
    const observed = await oneRound(res.queue<string>('observed'));
    expect(observed).toEqual(plain);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['publish observed', 'publish observed', 'publish observed']);
  } finally {
    metrics.close();
    tracing.close();
  }
});
