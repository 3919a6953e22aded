import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { isInstance, messageOf } from '../core/thrown.js';
import { registerInstrument, traceContextOf, type AddInfo, type AddScope, type Instrument, type JobOutcome, type ProcessScope } from '../core/instrumentation/index.js';
import type { LeasedJob } from '../core/leases/types.js';
import { assertBoolean, assertOptions } from '../core/validate.js';

export interface RelqTracingOptions {
  /** Where spans go. Default: the global tracer provider (@opentelemetry/api `trace`). */
  tracerProvider?: TracerProvider;
  /**
   * Make the process span of a single job a child of its publish span (one trace from add to
   * outcome), besides the link. Default false: process spans start their own trace and link
   * to the publish span, as the messaging conventions recommend for work that may run much later.
   */
  parentToProducer?: boolean;
}

const OPTION_KEYS = ['tracerProvider', 'parentToProducer'] as const;
/** The calls that add one job (a publish span with its id); the others add a batch. */
const SINGLE_JOB_CALLS: ReadonlySet<AddInfo['op']> = new Set(['add', 'tryAdd', 'upsertScheduler']);

/**
 * OpenTelemetry spans of relq, by the messaging semantic conventions (docs/observability.md):
 * `publish <queue>` (PRODUCER) around each call that adds jobs (add, addBulk, addFlow, a
 * scheduler's upsert or tick), whose context is stored with its jobs
 * (through the global propagator, W3C traceparent by default in the SDK), and `process <queue>`
 * (CONSUMER) around each handler run of a Worker or BatchWorker of this process, linked to the
 * publish context of each of its jobs. Handlers run inside the process span's context, so
 * their own spans nest under it. close() stops making spans.
 */
export class RelqTracing {
  private readonly tracer: Tracer;
  private readonly parentToProducer: boolean;
  private readonly unregister: () => void;

  constructor(options: RelqTracingOptions = {}) {
    assertOptions('tracing options', options, OPTION_KEYS);
    if (options.parentToProducer !== undefined) assertBoolean('parentToProducer', options.parentToProducer);
    this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer('relq');
    this.parentToProducer = options.parentToProducer ?? false;
    const instrument: Instrument = { add: (info) => this.publish(info), process: (queue, jobs) => this.processing(queue, jobs) };
    this.unregister = registerInstrument(instrument);
  }

  /** Stops making spans (jobs already stored keep their context). */
  close(): void {
    this.unregister();
  }

  /** The publish span of one call that adds jobs. */
  private publish(info: AddInfo): AddScope {
    const attributes: Attributes = {
      'messaging.system': 'relq',
      'messaging.destination.name': info.queue,
      'messaging.operation.name': 'publish',
      'messaging.operation.type': 'send',
      'relq.call': info.op,
    };
    const single = SINGLE_JOB_CALLS.has(info.op);
    if (single) attributes['messaging.message.id'] = info.ids[0];
    else attributes['messaging.batch.message_count'] = info.ids.length;
    const parent = context.active();
    const span = this.tracer.startSpan(`publish ${info.queue}`, { kind: SpanKind.PRODUCER, attributes }, parent);
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(parent, span), carrier);
    return {
      traceContext: carrier,
      end: (created, error) => {
        if (error !== undefined || !created) failed(span, error);
        else if (single) span.setAttribute('relq.job.created', created[0] === true);
        span.end();
      },
    };
  }

  /** The process span of one handler run. */
  private processing(queue: string, jobs: ReadonlyArray<LeasedJob<unknown>>): ProcessScope {
    const links: Link[] = [];
    let producer: Context | undefined;
    for (const job of jobs) {
      const carrier = traceContextOf(job);
      if (!carrier) continue;
      producer = propagation.extract(ROOT_CONTEXT, carrier);
      const sc = trace.getSpanContext(producer);
      if (sc && isSpanContextValid(sc) && !links.some((l) => l.context.spanId === sc.spanId)) links.push({ context: sc });
    }
    const attributes: Attributes = {
      'messaging.system': 'relq',
      'messaging.destination.name': queue,
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
    };
    const single = jobs.length === 1 ? jobs[0] : undefined;
    if (single) {
      attributes['messaging.message.id'] = single.id;
      attributes['relq.job.attempt'] = single.attempt;
      if (single.name) attributes['relq.job.name'] = single.name;
    } else {
      attributes['messaging.batch.message_count'] = jobs.length;
    }
    // A process span never nests under whatever context the worker loop was started in.
    const parent = this.parentToProducer && single && producer ? producer : ROOT_CONTEXT;
    const span = this.tracer.startSpan(`process ${queue}`, { kind: SpanKind.CONSUMER, attributes, links }, parent);
    const inside = trace.setSpan(parent, span);
    return {
      run: (handler) => context.with(inside, handler),
      end: (outcomes) => {
        recordOutcomes(span, outcomes);
        span.end();
      },
    };
  }
}

/** `relq.outcome` (the common one, or 'mixed' in a batch), and ERROR with the exception(s) for failures. */
function recordOutcomes(span: Span, outcomes: readonly JobOutcome[]): void {
  const kinds = new Set(outcomes.map((o) => o.kind));
  span.setAttribute('relq.outcome', kinds.size === 1 ? outcomes[0]!.kind : 'mixed');
  const errors = new Set<unknown>();
  for (const o of outcomes) if (o.kind === 'retried' || o.kind === 'dead') errors.add(o.error);
  for (const error of errors) failed(span, error);
}

function failed(span: Span, error: unknown): void {
  const message = messageOf(error ?? 'failed');
  span.recordException(isInstance(error, Error) ? error : message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
