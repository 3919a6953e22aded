import type { Metric } from 'prom-client';

/**
 * Metrics made unregistered (`registers: []`), named under one prefix: RelqMetrics checks
 * every name against its registry before it registers any, so a refused construction leaves
 * the registry as it was.
 */
export class MetricSet {
  readonly entries: Array<{ name: string; metric: Metric }> = [];

  constructor(private readonly prefix: string) {}

  /** `make` builds the metric under its full name, with `registers: []`. */
  add<M>(name: string, make: (fullName: string) => M): M {
    const fullName = `${this.prefix}${name}`;
    const metric = make(fullName);
    this.entries.push({ name: fullName, metric: metric as Metric });
    return metric;
  }
}
