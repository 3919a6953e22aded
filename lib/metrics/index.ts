// relq/metrics: Prometheus metrics with prom-client. See docs/observability.md.
export { RelqMetrics } from './relq-metrics.js';
export type { RelqMetricsOptions } from './relq-metrics.js';
export { DEFAULT_PROCESSING_BUCKETS, DEFAULT_WAIT_BUCKETS } from './buckets.js';
