import { register as globalRegistry, type Registry } from 'prom-client';
import { registerInstrument } from '../core/instrumentation/index.js';
import type { Queue } from '../core/queue/queue.js';
import { assertOptions, assertString } from '../core/validate.js';
import { DEFAULT_PROCESSING_BUCKETS, DEFAULT_WAIT_BUCKETS } from './buckets.js';
import { JobMetrics } from './job-metrics.js';
import { QueueGauges } from './queue-gauges.js';
import { ValidationError } from '../core/errors.js';

export interface RelqMetricsOptions {
  /** Where the metrics are registered. Default: prom-client's global registry. */
  registry?: Registry;
  /** Prefix of every metric name. Default 'relq_'. */
  prefix?: string;
  /** Queues whose gauges are read at each scrape (more with watchQueue). */
  queues?: ReadonlyArray<Queue<unknown, unknown>>;
  /** Buckets (seconds) of relq_job_wait_seconds. */
  waitBuckets?: readonly number[];
  /** Buckets (seconds) of relq_job_processing_seconds. */
  processingBuckets?: readonly number[];
}

const OPTION_KEYS = ['registry', 'prefix', 'queues', 'waitBuckets', 'processingBuckets'] as const;

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

  constructor(options: RelqMetricsOptions = {}) {
    assertOptions('metrics options', options, OPTION_KEYS);
    const prefix = options.prefix ?? 'relq_';
    assertString('prefix', prefix, 64);
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) throw new ValidationError('prefix', 'must be a Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)');
    for (const field of ['waitBuckets', 'processingBuckets'] as const) {
      const b = options[field];
      if (b !== undefined && (!Array.isArray(b) || b.length === 0 || !b.every((x) => typeof x === 'number' && x > 0))) {
        throw new ValidationError(field, 'must be a non-empty array of positive numbers (seconds)');
      }
    }
    this.registry = options.registry ?? globalRegistry;
    const before = new Set(this.registry.getMetricsAsArray().map((m) => m.name));
    const jobs = new JobMetrics(this.registry, prefix, {
      wait: [...(options.waitBuckets ?? DEFAULT_WAIT_BUCKETS)],
      processing: [...(options.processingBuckets ?? DEFAULT_PROCESSING_BUCKETS)],
    });
    this.gauges = new QueueGauges(this.registry, prefix);
    this.names = this.registry.getMetricsAsArray().map((m) => m.name).filter((n) => !before.has(n));
    for (const queue of options.queues ?? []) this.watchQueue(queue);
    this.unregister = registerInstrument(jobs);
  }

  /** Reports the gauges of `queue` (relq_queue_*) at each scrape, while the Queue object is open. */
  watchQueue(queue: Queue<unknown, unknown>): this {
    this.gauges.watch(queue);
    return this;
  }

  unwatchQueue(queue: Queue<unknown, unknown>): this {
    this.gauges.unwatch(queue);
    return this;
  }

  /** Stops counting and removes this object's metrics from the registry. */
  close(): void {
    this.unregister();
    for (const name of this.names) this.registry.removeSingleMetric(name);
  }
}
