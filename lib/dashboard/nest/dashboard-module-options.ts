import type { ModuleMetadata } from '@nestjs/common';
import type { FactoryFunction, FactoryInject } from '../../nest/options/async-options.js';
import type { DashboardGuard, DashboardOptions } from '../options.js';

/** The dashboard of a Nest app: where it answers, who may use it, which queues it shows. */
export interface RelqDashboardModuleOptions {
  /** The URL path of the dashboard, e.g. '/admin/queues'. */
  path: string;
  /**
   * Who may read and act (the Express request, and what it asks for). Without a guard reads are
   * open and actions refused. It runs before Nest's guards, as any middleware: see
   * docs/dashboard.md for using the app's own authentication.
   */
  guard?: DashboardGuard;
  /** Names of the queues to show (default: every queue the app registered, in registration order). */
  queues?: string[];
  throughput?: DashboardOptions['throughput'];
  refreshMs?: number;
}

/** The options from a factory, e.g. to take the guard from an injected auth service. */
export interface RelqDashboardModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory: FactoryFunction<RelqDashboardModuleOptions>;
  inject?: FactoryInject;
}

/** @internal */
export const RELQ_DASHBOARD_OPTIONS = Symbol('RELQ_DASHBOARD_OPTIONS');
