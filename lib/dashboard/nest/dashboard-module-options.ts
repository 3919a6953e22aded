import type { ModuleMetadata } from '@nestjs/common';
import type { FactoryFunction, FactoryInject } from '../../nest/queues/async-options.js';
import type { DashboardOptions } from '../options.js';

/**
 * The dashboard of a Nest app: where it answers, which queues it shows, and the options of
 * createDashboard (who may use it, the charts). Its `guard` runs before Nest's guards, as any
 * middleware: see docs/dashboard.md for using the app's own authentication. What it says at
 * start-up goes to the app's log.
 */
export interface RelqDashboardModuleOptions extends Omit<DashboardOptions, 'queues' | 'basePath' | 'onWarning'> {
  /** The URL path of the dashboard, e.g. '/admin/queues'. */
  path: string;
  /** Names of the queues to show (default: every queue the app registered, in registration order). */
  queues?: string[];
}

/** The options from a factory, e.g. to take the guard from an injected auth service. */
export interface RelqDashboardModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory: FactoryFunction<RelqDashboardModuleOptions>;
  inject?: FactoryInject;
}

/** @internal */
export const RELQ_DASHBOARD_OPTIONS = Symbol('RELQ_DASHBOARD_OPTIONS');
