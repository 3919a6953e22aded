/**
 * relq/dashboard/nest: the dashboard mounted in a NestJS app (docs/dashboard.md). Promised:
 * RelqDashboardModule and its options. test/packaging/surface.spec.ts holds the exact list.
 */
export { RelqDashboardModule } from './relq-dashboard.module.js';
export type { RelqDashboardModuleOptions, RelqDashboardModuleAsyncOptions } from './dashboard-module-options.js';
