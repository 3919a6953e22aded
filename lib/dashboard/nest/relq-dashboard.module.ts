import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Inject,
  Logger,
  Module,
  RequestMethod,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RelqConfigError } from '../../nest/errors.js';
import { LOG_CONTEXT } from '../../nest/relq.constants.js';
import { QueueRegistry } from '../../nest/queues/queue.registry.js';
import { openDashboard, type DashboardHandler } from '../handler.js';
import { assertOptions } from '../../core/validate.js';
import { DASHBOARD_OPTION_KEYS, normalizeBasePath, resolveDashboardOptions } from '../options.js';
import { RELQ_DASHBOARD_OPTIONS, type RelqDashboardModuleAsyncOptions, type RelqDashboardModuleOptions } from './dashboard-module-options.js';

// createDashboard's own, but the path for basePath, names for queues and the app's log for onWarning
const MODULE_OPTION_KEYS: ReadonlyArray<string> = ['path', ...DASHBOARD_OPTION_KEYS.filter((k) => k !== 'basePath' && k !== 'onWarning')];

/**
 * The HTTP adapters whose middleware gets Node's request and response, as the handler needs:
 * Express's own (which extend them), and Fastify's raw ones (through @fastify/middie), before
 * Fastify parses a body.
 */
const ADAPTERS: ReadonlyArray<string> = ['express', 'fastify'];

/**
 * Mounts the dashboard (lib/dashboard/handler.ts) as a middleware on the app's Express or
 * Fastify adapter at `path`, showing the queues registered with `QueueModule.registerQueue`
 * and, unless `queues` lists its own, those added and removed at run time
 * (`QueueRegistry.addQueue`). Needs `QueueModule.forRoot`. The handler is made at bootstrap,
 * once every declared queue is registered, and closed with the app.
 */
@Module({})
export class RelqDashboardModule implements NestModule, OnApplicationBootstrap, OnModuleDestroy {
  private handler: DashboardHandler | undefined;
  private unwatchRegistry: (() => void) | undefined;
  private readonly logger = new Logger(LOG_CONTEXT);

  constructor(
    private readonly registry: QueueRegistry,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(RELQ_DASHBOARD_OPTIONS) private readonly options: RelqDashboardModuleOptions,
  ) {}

  static forRoot(options: RelqDashboardModuleOptions): DynamicModule {
    return { module: RelqDashboardModule, providers: [{ provide: RELQ_DASHBOARD_OPTIONS, useValue: options }] };
  }

  static forRootAsync(options: RelqDashboardModuleAsyncOptions): DynamicModule {
    return {
      module: RelqDashboardModule,
      imports: options.imports ?? [],
      providers: [{ provide: RELQ_DASHBOARD_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    // An unknown key (a typo) is refused before anything is mounted; the values are checked by
    // createDashboard at bootstrap, but the path here, before Nest routes anything to it.
    assertOptions('RelqDashboardModule options', this.options, MODULE_OPTION_KEYS);
    const path = normalizeBasePath(this.options?.path, 'path');
    // Until bootstrap made the handler, requests go on to the app.
    const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) =>
      this.handler ? this.handler(req, res, next) : next();
    consumer.apply(middleware).forRoutes({ path: `${path}{/*rest}`, method: RequestMethod.ALL });
  }

  onApplicationBootstrap(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (!adapter) return; // an application context without HTTP: nothing to mount on
    if (!ADAPTERS.includes(adapter.getType())) {
      throw new RelqConfigError(`RelqDashboardModule mounts on Express or Fastify; this app runs on '${adapter.getType()}'`);
    }
    const { path, queues, ...rest } = this.options;
    const options = {
      ...rest,
      queues: (queues ?? this.registry.getQueueNames()).map((name) => this.registry.getAppQueue(name)),
      basePath: path,
      onWarning: (message: string) => this.logger.warn(message),
    };
    // Without a list of its own it shows the app's queues, those added at run time too.
    const dashboard = openDashboard(resolveDashboardOptions(options, { mayBeEmpty: queues === undefined }));
    this.handler = dashboard.handler;
    if (queues === undefined) {
      this.unwatchRegistry = this.registry.watchQueues((change) =>
        change.type === 'added' ? dashboard.watch(change.queue) : dashboard.unwatch(change.queue.name),
      );
    }
  }

  onModuleDestroy(): void {
    this.unwatchRegistry?.();
    this.unwatchRegistry = undefined;
    this.handler?.close();
    this.handler = undefined;
  }
}
