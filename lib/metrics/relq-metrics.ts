import type { AnyQueue } from '../core/queue/any-queue.js';
import { register as globalRegistry, type Registry } from 'prom-client';
import { registerInstrument } from '../core/instrumentation/index.js';
import { assertOptions, assertString, describe } from '../core/validate.js';
import { DEFAULT_PROCESSING_BUCKETS, DEFAULT_WAIT_BUCKETS } from './buckets.js';
import { JobMetrics } from './job-metrics.js';
import { MetricSet } from './metric-set.js';
import { QueueGauges, queueInternals } from './queue-gauges.js';
import { ValidationError } from '../core/errors.js';

export interface RelqMetricsOptions {
  /** Where the metrics are registered. Default: prom-client's global registry. */
  registry?: Registry;
  /** Prefix of every metric name. Default 'relq_'. */
  prefix?: string;
  /** Queues whose gauges are read at each scrape (more with watchQueue). */
  queues?: ReadonlyArray<AnyQueue>;
  /** Buckets (seconds) of relq_job_wait_seconds. */
  waitBuckets?: readonly number[];
  /** Buckets (seconds) of relq_job_processing_seconds. */
  processingBuckets?: readonly number[];
}

const OPTION_KEYS = ['registry', 'prefix', 'queues', 'waitBuckets', 'processingBuckets'] as const;

/** A copy of `buckets` once each is a positive number of seconds, greater than the one before. */
function checkBuckets(field: string, buckets: unknown): number[] {
  if (!Array.isArray(buckets) || buckets.length === 0) throw new ValidationError(field, `must be a non-empty array of positive numbers (seconds), got ${describe(buckets)}`);
  buckets.forEach((b: unknown, i) => {
    if (typeof b !== 'number' || !Number.isFinite(b) || b <= 0) throw new ValidationError(`${field}[${i}]`, `must be a positive finite number (seconds), got ${describe(b)}`);
    if (i > 0 && b <= buckets[i - 1]) throw new ValidationError(`${field}[${i}]`, `must be greater than the bucket before it (${buckets[i - 1]}): buckets ascend strictly`);
  });
  return [...(buckets as number[])];
}

/**
 * Prometheus metrics of relq (docs/observability.md). Counters and histograms count what
 * every Queue and Worker of this process does from construction on; gauges read the watched
 * queues from Redis at scrape time. close() stops counting and removes the metrics.
 */
export class RelqMetrics {
  readonly registry: Registry;
  private readonly gauges: QueueGauges;
  private readonly names: string[];
  private readonly unregister: () => void;

  /** Checks every option, queue and metric name before it registers anything. */
  constructor(options: RelqMetricsOptions = {}) {
    assertOptions('metrics options', options, OPTION_KEYS);
    const prefix = options.prefix ?? 'relq_';
    assertString('prefix', prefix, 64);
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) throw new ValidationError('prefix', 'must be a Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)');
    const wait = checkBuckets('waitBuckets', options.waitBuckets ?? DEFAULT_WAIT_BUCKETS);
    const processing = checkBuckets('processingBuckets', options.processingBuckets ?? DEFAULT_PROCESSING_BUCKETS);
    const queues = options.queues ?? [];
    if (!Array.isArray(queues)) throw new ValidationError('queues', `must be an array of relq Queue objects, got ${describe(queues)}`);
    queues.forEach((queue, i) => queueInternals(queue, `queues[${i}]`));
    const registry = options.registry ?? globalRegistry;
    if (typeof registry?.getSingleMetric !== 'function' || typeof registry.registerMetric !== 'function') {
      throw new ValidationError('registry', 'must be a prom-client Registry');
    }
    const set = new MetricSet(prefix);
    const jobs = new JobMetrics(set, { wait, processing });
    this.gauges = new QueueGauges(set);
    for (const { name } of set.entries) {
      if (registry.getSingleMetric(name)) {
        throw new ValidationError('registry', `already has a metric named '${name}' (another RelqMetrics with this prefix? close() it, or choose another prefix)`);
      }
    }
    for (const { metric } of set.entries) registry.registerMetric(metric);
    this.registry = registry;
    this.names = set.entries.map((e) => e.name);
    for (const queue of queues) this.watchQueue(queue);
    this.unregister = registerInstrument(jobs);
  }

  /** Reports the gauges of `queue` (relq_queue_*) at each scrape, while the Queue object is open. */
  watchQueue(queue: AnyQueue): this {
    this.gauges.watch(queue);
    return this;
  }

  unwatchQueue(queue: AnyQueue): this {
    this.gauges.unwatch(queue);
    return this;
  }

  /** Stops counting and removes this object's metrics from the registry. */
  close(): void {
    this.unregister();
    for (const name of this.names) this.registry.removeSingleMetric(name);
  }
}
