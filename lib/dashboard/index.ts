export { createDashboard, type DashboardHandler } from './handler.js';
export type { DashboardAccess, DashboardGuard, DashboardOptions } from './options.js';
export type { QueueOverview, JobList } from './api.js';
export type { JobSummary } from './job-summary.js';
export type { Throughput, ThroughputPoint, CountsSample } from './throughput.js';
export { ACTION_HEADER } from './http.js';
