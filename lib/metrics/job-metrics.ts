import { Counter, Histogram } from 'prom-client';
import type { AddInfo, AddScope, Instrument, JobOutcome, ProcessScope } from '../core/instrumentation/index.js';
import type { LeasedJob } from '../core/leases/types.js';
import type { SweepResult } from '../core/management/read-types.js';
import type { MetricSet } from './metric-set.js';

/**
 * The counters and histograms: what this process's producers, workers and sweeps did, told
 * by the instrumentation hook (lib/core/instrumentation).
 */
export class JobMetrics implements Instrument {
  private readonly added: Counter<'queue'>;
  private readonly completed: Counter<'queue'>;
  private readonly failed: Counter<'queue'>;
  private readonly retried: Counter<'queue'>;
  private readonly deadLettered: Counter<'queue'>;
  private readonly stalled: Counter<'queue'>;
  private readonly rateLimited: Counter<'queue'>;
  private readonly cancelled: Counter<'queue'>;
  private readonly waitTime: Histogram<'queue'>;
  private readonly processingTime: Histogram<'queue'>;

  constructor(set: MetricSet, buckets: { wait: number[]; processing: number[] }) {
    const counter = (name: string, help: string) => set.add(name, (full) => new Counter({ name: full, help, labelNames: ['queue'] as const, registers: [] }));
    this.added = counter('jobs_added_total', 'Jobs added by this process (duplicates of an existing job id not counted).');
    this.completed = counter('jobs_completed_total', "Jobs this process's handlers completed.");
    this.failed = counter('jobs_failed_total', "Failed attempts of this process's handlers (retried or dead-lettered).");
    this.retried = counter('jobs_retried_total', "Failed attempts of this process's handlers that will be retried.");
    this.deadLettered = counter('jobs_dead_lettered_total', "Jobs dead-lettered by this process's handlers or sweeps.");
    this.stalled = counter('jobs_stalled_total', "Expired leases this process's sweeps returned to the queue.");
    this.rateLimited = counter('jobs_rate_limited_total', "Jobs this process's handlers put back because of a rate limit.");
    this.cancelled = counter('jobs_cancelled_total', "Jobs cancelled (queue.cancel) while this process's handlers ran them.");
    const histogram = (name: string, help: string, bucketList: number[]) =>
      set.add(name, (full) => new Histogram({ name: full, help, labelNames: ['queue'] as const, buckets: bucketList, registers: [] }));
    this.waitTime = histogram('job_wait_seconds', 'From the creation of a job to its first lease by this process.', buckets.wait);
    this.processingTime = histogram('job_processing_seconds', "From a handler's start to its outcome, per job.", buckets.processing);
  }

  add(info: AddInfo): AddScope {
    return {
      end: (created) => {
        const n = created ? created.filter(Boolean).length : 0;
        if (n > 0) this.added.inc({ queue: info.queue }, n);
      },
    };
  }

  process(queue: string, jobs: ReadonlyArray<LeasedJob<unknown>>): ProcessScope {
    const labels = { queue };
    for (const job of jobs) {
      // A retry's wait would include its earlier attempts and backoff: first attempts only.
      if (job.attempt === 1) this.waitTime.observe(labels, Math.max(job.leasedAt - job.createdAt, 0) / 1000);
    }
    const started = performance.now();
    return {
      run: (handler) => handler(),
      end: (outcomes) => {
        const seconds = (performance.now() - started) / 1000;
        for (const o of outcomes) this.count(labels, o, seconds);
      },
    };
  }

  sweep(queue: string, result: SweepResult): void {
    if (result.stalled > 0) this.stalled.inc({ queue }, result.stalled);
    if (result.deadLettered > 0) this.deadLettered.inc({ queue }, result.deadLettered);
  }

  private count(labels: { queue: string }, o: JobOutcome, seconds: number): void {
    switch (o.kind) {
      case 'completed':
        this.completed.inc(labels);
        break;
      case 'retried':
        this.failed.inc(labels);
        this.retried.inc(labels);
        break;
      case 'dead':
        this.failed.inc(labels);
        this.deadLettered.inc(labels);
        break;
      case 'rate-limited':
        this.rateLimited.inc(labels);
        break;
      case 'cancelled':
        this.cancelled.inc(labels);
        return; // not a handler's outcome: no processing time
      default:
        return; // given back unstarted, moved by its handler (a step: delayed, waiting for its children), or lease lost: no outcome of this process
    }
    this.processingTime.observe(labels, seconds);
  }
}
