// relq/tracing: OpenTelemetry spans through @opentelemetry/api. See docs/observability.md.
export { RelqTracing } from './relq-tracing.js';
export type { RelqTracingOptions } from './relq-tracing.js';
