/**
 * relq/dashboard: the web dashboard as a plain Node request handler (docs/dashboard.md).
 * Promised: createDashboard, its options and access guard, the header an action request must
 * carry (ACTION_HEADER), and the types of what its JSON API answers.
 * test/packaging/surface.spec.ts holds the exact list.
 */
export { createDashboard, type DashboardHandler } from './handler.js';
export type { DashboardAccess, DashboardGuard, DashboardOptions } from './options.js';
export type { QueueOverview, JobList } from './api.js';
export type { JobSummary } from './job-summary.js';
export type { Throughput, ThroughputPoint, CountsSample } from './throughput.js';
export { ACTION_HEADER } from './http.js';
