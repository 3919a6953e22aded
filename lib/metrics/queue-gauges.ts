import type { AnyQueue } from '../core/queue/any-queue.js';
import { Gauge } from 'prom-client';
import { internalsOf, type QueueInternals } from '../core/queue/internals.js';
import type { QueueCounts } from '../core/management/read-types.js';
import { ValidationError } from '../core/errors.js';
import type { MetricSet } from './metric-set.js';

/** The job states relq_queue_jobs reports, as label values, and where counts() has them. */
const STATES = [
  ['pending', 'pending'],
  ['working', 'working'],
  ['delayed', 'delayed'],
  ['completed', 'completed'],
  ['dead', 'dead'],
  ['waiting_children', 'waitingChildren'],
] as const satisfies ReadonlyArray<readonly [string, keyof QueueCounts]>;

interface Reading {
  queue: string;
  counts: QueueCounts;
  oldestPendingAgeMs: number | undefined;
}

/** The internals the gauges read through; anything but a relq Queue is refused. */
export function queueInternals(queue: unknown, field = 'queue'): QueueInternals<unknown> {
  const internals = internalsOf<unknown>(queue);
  if (!internals) throw new ValidationError(field, 'must be a relq Queue');
  return internals;
}

/**
 * The gauges, read from Redis at scrape time: one counts call per watched queue per scrape,
 * shared by every gauge (prom-client collects them all at once, so the first one's read
 * serves the others).
 */
export class QueueGauges {
  private readonly watched = new Map<AnyQueue, QueueInternals<unknown>>();
  private reading: Promise<Reading[]> | undefined;

  constructor(set: MetricSet) {
    const read = () => this.read();
    set.add('queue_jobs', (name) =>
      new Gauge({
        name,
        help: 'Jobs of the queue in each state (completed: those still retained).',
        labelNames: ['queue', 'state'] as const,
        registers: [],
        async collect() {
          this.reset(); // a queue no longer watched leaves the output
          for (const r of await read()) {
            for (const [state, field] of STATES) this.set({ queue: r.queue, state }, r.counts[field] ?? 0);
          }
        },
      }),
    );
    /** A gauge with one value per watched queue. */
    const perQueue = (help: string, value: (r: Reading) => number) => (name: string) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue'] as const,
        registers: [],
        async collect() {
          this.reset();
          for (const r of await read()) this.set({ queue: r.queue }, value(r));
        },
      });
    set.add(
      'queue_oldest_pending_age_seconds',
      perQueue('Age of the oldest pending job at a head of the queue (0 when none waits).', (r) => (r.oldestPendingAgeMs ?? 0) / 1000),
    );
    set.add('queue_paused', perQueue('1 while the queue is paused, else 0.', (r) => (r.counts.paused ? 1 : 0)));
  }

  watch(queue: AnyQueue): void {
    this.watched.set(queue, queueInternals(queue));
  }

  unwatch(queue: AnyQueue): void {
    this.watched.delete(queue);
  }

  /** One read per scrape: the gauges' collect calls of one scrape share it. */
  private read(): Promise<Reading[]> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readAll(): Promise<Reading[]> {
    const open = [...this.watched].filter(([queue, internals]) => {
      if (internals.isClosed) this.watched.delete(queue); // a closed Queue object can read nothing
      return !internals.isClosed;
    });
    return Promise.all(open.map(async ([, internals]) => ({ queue: internals.name, ...(await internals.countsAndAge()) })));
  }
}
