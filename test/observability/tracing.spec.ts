/**
 * relq/tracing: a PRODUCER span per add whose context is stored with the jobs, a CONSUMER span
 * per handler run (Worker and BatchWorker) linked to it, the handler running inside it, the
 * outcome recorded. OpenTelemetry SDK with an in-memory exporter, on a private redis-server.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { BatchWorker, RateLimitError, Worker, type Job } from '../../lib/index.js';
import { RelqTracing } from '../../lib/tracing/index.js';
import { untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
let tracing: RelqTracing | undefined;

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
beforeEach(() => {
  exporter.reset();
  tracing = new RelqTracing({ tracerProvider: provider });
});
afterEach(() => tracing?.close());
afterAll(async () => {
  await provider.shutdown();
  context.disable();
  propagation.disable();
});

const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);
const attr = (s: ReadableSpan, key: string) => s.attributes[key];

test('add makes a publish span whose context travels with the job; the handler runs inside a process span linked to it', async () => {
  const q = res.queue<string, string>('mail');
  const tracer = provider.getTracer('app');
  const { id } = await tracer.startActiveSpan('request', async (request) => {
    try {
      return await q.add('hello', { name: 'welcome' });
    } finally {
      request.end();
    }
  });
  const [publish] = spans('publish mail');
  expect(publish).toBeDefined();
  expect(publish!.kind).toBe(SpanKind.PRODUCER);
  expect(publish!.attributes).toMatchObject({
    'messaging.system': 'relq',
    'messaging.destination.name': 'mail',
    'messaging.operation.name': 'publish',
    'messaging.operation.type': 'send',
    'messaging.message.id': id,
    'relq.job.created': true,
  });
  expect(publish!.parentSpanContext?.spanId).toBe(spans('request')[0]!.spanContext().spanId); // the caller's span is its parent
  // the stored job carries the publish span's traceparent
  const record = await res.client().hget(q.keys.byName.jobs, id);
  expect(record).toContain(`"traceparent":"00-${publish!.spanContext().traceId}-${publish!.spanContext().spanId}-01"`);

  res.worker(
    new Worker<string, string>(q, async (job: Job<string>) => {
      await tracer.startActiveSpan('send-email', async (s) => s.end());
      return `sent ${job.data}`;
    }),
  );
  await waitUntil(() => spans('process mail').length === 1, 'the process span');
  const [processSpan] = spans('process mail');
  const [inner] = spans('send-email');
  expect(processSpan!.kind).toBe(SpanKind.CONSUMER);
  expect(processSpan!.attributes).toMatchObject({
    'messaging.system': 'relq',
    'messaging.destination.name': 'mail',
    'messaging.operation.name': 'process',
    'messaging.operation.type': 'process',
    'messaging.message.id': id,
    'relq.job.attempt': 1,
    'relq.job.name': 'welcome',
    'relq.outcome': 'completed',
  });
  expect(processSpan!.links.map((l) => l.context.spanId)).toEqual([publish!.spanContext().spanId]);
  expect(processSpan!.parentSpanContext).toBeUndefined(); // its own trace, linked
  expect(processSpan!.status.code).toBe(SpanStatusCode.UNSET);
  expect(inner!.parentSpanContext?.spanId).toBe(processSpan!.spanContext().spanId); // the handler's spans nest under it
});

test('failures, dead letters and rate limits are recorded on the process span', async () => {
  const q = res.queue<string>('flaky', { defaults: { attempts: 2, backoff: 0 } });
  let limited = false;
  res.worker(
    new Worker<string>(q, async (job: Job<string>) => {
      if (job.data === 'limited' && !limited) {
        limited = true;
        throw new RateLimitError(10);
      }
      if (job.data === 'broken') throw new Error(`attempt ${job.attempt} broke`);
    }),
  );
  await q.add('broken');
  await q.add('limited');
  await waitUntil(() => spans('process flaky').length === 4, 'four process spans');
  const byOutcome = (o: string) => spans('process flaky').filter((s) => attr(s, 'relq.outcome') === o);
  const [retried] = byOutcome('retried');
  expect(retried!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'attempt 1 broke' });
  expect(retried!.events.find((e) => e.name === 'exception')?.attributes?.['exception.message']).toBe('attempt 1 broke');
  const [dead] = byOutcome('dead');
  expect(dead!.status.code).toBe(SpanStatusCode.ERROR);
  expect(attr(dead!, 'relq.job.attempt')).toBe(2);
  const [rateLimited] = byOutcome('rate-limited');
  expect(rateLimited!.status.code).toBe(SpanStatusCode.UNSET);
  expect(byOutcome('completed')).toHaveLength(1);
  // every attempt links to the job's one publish span
  const publishIds = new Set(spans('publish flaky').map((s) => s.spanContext().spanId));
  expect(publishIds.size).toBe(2);
  for (const s of spans('process flaky')) expect(publishIds.has(s.links[0]!.context.spanId)).toBe(true);
});

test('addBulk makes one publish span; a batch runs in one process span linked to every producer', async () => {
  const q = res.queue<number>('batches');
  await q.addBulk([1, 2, 3].map((data) => ({ data })));
  await q.add(4);
  const publishes = spans('publish batches');
  expect(publishes).toHaveLength(2);
  expect(publishes[0]!.attributes).toMatchObject({ 'messaging.batch.message_count': 3 });
  expect(publishes[0]!.attributes['messaging.message.id']).toBeUndefined();
  res.worker(new BatchWorker<number>(q, async () => undefined, { size: 4 }));
  await waitUntil(() => spans('process batches').length === 1, 'the batch span');
  const [batch] = spans('process batches');
  expect(batch!.attributes).toMatchObject({ 'messaging.batch.message_count': 4, 'relq.outcome': 'completed' });
  expect(batch!.links.map((l) => l.context.spanId).sort()).toEqual(publishes.map((p) => p.spanContext().spanId).sort());
});

test("addFlow and a scheduler's upsert and ticks make publish spans; their jobs carry the context to their process spans", async () => {
  const q = res.queue<string>('made');
  const flow = await q.addFlow({ data: 'zip', children: [{ data: 'resize' }] });
  await q.upsertScheduler('beat', { everyMs: 200, missed: 'skip' }, { data: 'beat' });
  const [beat] = await q.getSchedulers();
  const firstSlot = beat!.nextRunAt!;
  await untilRedisTime(res.client(), firstSlot);
  expect(await q.runSchedulers()).toMatchObject({ added: 1 });
  const secondSlot = (await q.getSchedulers())[0]!.nextRunAt!;

  const [byFlow, byUpsert, byTick] = spans('publish made');
  expect(spans('publish made')).toHaveLength(3);
  const common = { 'messaging.system': 'relq', 'messaging.destination.name': 'made', 'messaging.operation.name': 'publish', 'messaging.operation.type': 'send' };
  expect(byFlow!.attributes).toEqual({ ...common, 'relq.call': 'addFlow', 'messaging.batch.message_count': 2 });
  expect(byUpsert!.attributes).toEqual({ ...common, 'relq.call': 'upsertScheduler', 'messaging.message.id': `repeat:beat:${firstSlot}`, 'relq.job.created': true });
  expect(byTick!.attributes).toEqual({ ...common, 'relq.call': 'runSchedulers', 'messaging.batch.message_count': 1 });
  for (const s of [byFlow!, byUpsert!, byTick!]) expect(s.kind).toBe(SpanKind.PRODUCER);

  // each job's process span links to the publish span of the call that added it
  res.worker(new Worker<string>(q, async () => undefined, { blockMs: 100 }));
  await waitUntil(() => spans('process made').length === 4, 'the four jobs to run', 10_000);
  const linked = Object.fromEntries(spans('process made').map((p) => [p.attributes['messaging.message.id'], p.links.map((l) => l.context.spanId)]));
  expect(linked).toEqual({
    [flow.id]: [byFlow!.spanContext().spanId],
    [flow.children[0]!.id]: [byFlow!.spanContext().spanId],
    [`repeat:beat:${firstSlot}`]: [byUpsert!.spanContext().spanId],
    [`repeat:beat:${secondSlot}`]: [byTick!.spanContext().spanId],
  });
  // the scheduler's stored template is not stamped: only the jobs made from it
  expect(await res.client().hget(q.keys.derived.schedulers, 'beat')).not.toContain('traceparent');
});

test("a handler's addChildren makes a publish span; its wait ends the process span with the outcome waiting-children", async () => {
  const q = res.queue<string, string>('fans');
  res.worker(
    new Worker<string, string>(
      q,
      async (job) => {
        if (job.data !== 'parent') return 'child';
        if ((await job.childrenResults()).k !== undefined) return 'joined';
        await job.addChildren([{ data: 'k', opts: { jobId: 'k' } }]);
        await job.waitForChildren();
        return 'dropped';
      },
      { blockMs: 100 },
    ),
  );
  const { id } = await q.add('parent');
  expect(await q.waitForResult(id, { timeoutMs: 5000 })).toBe('joined');
  await waitUntil(() => spans('process fans').length === 3, 'three handler runs', 5000);
  const outcomes = spans('process fans').map((s) => `${String(attr(s, 'messaging.message.id'))}:${String(attr(s, 'relq.outcome'))}`);
  expect(outcomes).toEqual([`${id}:waiting-children`, 'k:completed', `${id}:completed`]);
  const byChildren = spans('publish fans').find((s) => attr(s, 'relq.call') === 'addChildren');
  expect(byChildren?.attributes).toMatchObject({ 'relq.call': 'addChildren', 'messaging.batch.message_count': 1 });
  // the child's process span links to it
  expect(spans('process fans')[1]!.links.map((l) => l.context.spanId)).toEqual([byChildren!.spanContext().spanId]);
});

test('a job cancelled as it runs ends its process span with the outcome cancelled', async () => {
  const q = res.queue<string>('cancels');
  res.worker(new Worker<string>(q, (job) => new Promise((resolve) => job.signal.addEventListener('abort', resolve)), { blockMs: 100 }));
  const { id } = await q.add('long');
  await waitUntil(async () => (await q.getJob(id))?.state === 'working', 'the job to run');
  expect(await q.cancel(id)).toBe('dead');
  await waitUntil(() => spans('process cancels').length === 1, 'the process span to end', 5000);
  expect(attr(spans('process cancels')[0]!, 'relq.outcome')).toBe('cancelled');
});

test('parentToProducer makes the process span a child of its publish span', async () => {
  tracing!.close();
  tracing = new RelqTracing({ tracerProvider: provider, parentToProducer: true });
  const q = res.queue<string>('parented');
  await q.add('x');
  res.worker(new Worker<string>(q, async () => undefined));
  await waitUntil(() => spans('process parented').length === 1, 'the process span');
  const [publish] = spans('publish parented');
  expect(spans('process parented')[0]!.parentSpanContext?.spanId).toBe(publish!.spanContext().spanId);
  expect(() => new RelqTracing({ parentToProducer: 'yes' } as never)).toThrow(/parentToProducer/);
});

test('without tracing the stored job is unchanged and no span is made; close() stops tracing', async () => {
  tracing!.close();
  tracing = undefined;
  const q = res.queue<string>('plain');
  const { id } = await q.add('x');
  const record = await res.client().hget(q.keys.byName.jobs, id);
  expect(record).toMatch(/^\{"t":\d+,"a":3\}\n"x"$/);
  const done: string[] = [];
  const w = res.worker(new Worker<string>(q, async (job: Job<string>) => void done.push(job.id)));
  await waitUntil(() => done.length === 1, 'the job to run');
  await w.close();
  expect(exporter.getFinishedSpans()).toEqual([]);
  expect(trace.getActiveSpan()).toBeUndefined();
});
