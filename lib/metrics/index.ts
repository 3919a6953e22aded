/**
 * relq/metrics: Prometheus metrics through prom-client (docs/observability.md). Promised:
 * RelqMetrics, its options and the default histogram buckets. test/packaging/surface.spec.ts
 * holds the exact list.
 */
export { RelqMetrics } from './relq-metrics.js';
export type { RelqMetricsOptions } from './relq-metrics.js';
export { DEFAULT_PROCESSING_BUCKETS, DEFAULT_WAIT_BUCKETS } from './buckets.js';
