#!/usr/bin/env node
// CPU per span of the OpenTelemetry SDK alone, made as relq/tracing makes a worker's process
// span (six attributes, a link to the job's publish context, the handler run inside its
// context, one attribute at the end), on the observability scenario's SDK setup. The bound it
// puts on "tracing against none" is this figure beside relq's own Node time per job
// (docs/observability.md, Cost). `node tools/otel-span-cost.mjs [--spans 50000]`
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { spans: { type: 'string', default: '50000' } } });
const n = Number(values.spans);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const exporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
const tracer = provider.getTracer('relq');
const carrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

async function round() {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const producer = propagation.extract(ROOT_CONTEXT, carrier);
    const sc = trace.getSpanContext(producer);
    const links = sc && isSpanContextValid(sc) ? [{ context: sc }] : [];
    const attributes = {
      'messaging.system': 'relq',
      'messaging.destination.name': 'q',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.message.id': String(i),
      'relq.job.attempt': 1,
    };
    const span = tracer.startSpan('process q', { kind: SpanKind.CONSUMER, attributes, links }, ROOT_CONTEXT);
    await context.with(trace.setSpan(ROOT_CONTEXT, span), async () => undefined);
    span.setAttribute('relq.outcome', 'completed');
    span.end();
    if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve)); // let the batch processor run
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const perRound = [];
for (let r = 0; r < 4; r++) perRound.push(await round()); // the first warms up
await provider.shutdown();
console.log(`OpenTelemetry SDK, one process span: ${perRound.slice(1).map((x) => x.toFixed(2)).join(', ')} µs of CPU per span (after a warm-up round of ${perRound[0].toFixed(2)})`);
