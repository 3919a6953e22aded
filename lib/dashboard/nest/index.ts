export { RelqDashboardModule } from './relq-dashboard.module.js';
export type { RelqDashboardModuleOptions, RelqDashboardModuleAsyncOptions } from './dashboard-module-options.js';
