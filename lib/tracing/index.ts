/**
 * relq/tracing: OpenTelemetry spans through @opentelemetry/api (docs/observability.md).
 * Promised: RelqTracing and its options. test/packaging/surface.spec.ts holds the exact list.
 */
export { RelqTracing } from './relq-tracing.js';
export type { RelqTracingOptions } from './relq-tracing.js';
