import { Inject, Injectable, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import { ContextIdFactory, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { OnQueueEventMetadata } from '../decorators/on-queue-event.decorator.js';
import type { ProcessMetadata } from '../decorators/process.decorator.js';
import type { ProcessorMetadata } from '../decorators/processor.decorator.js';
import { RelqConfigError } from '../errors.js';
import {
  checkProcessOptions,
  checkProcessorOptions,
  resolveWorkerSettings,
  type ResolvedRootOptions,
} from '../options.js';
import type {
  HandlerDefinition,
  InstanceSource,
  ListenerDefinition,
  ProcessorDefinition,
} from './processor-definition.js';
import { QueueOrchestrator } from '../runtime/queue.orchestrator.js';
import { QueueStore } from '../runtime/queue.store.js';
import { getQueueToken, ON_QUEUE_EVENT_METADATA, PROCESS_METADATA, PROCESSOR_METADATA, RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

const EVENT_TYPES = new Set(['completed', 'failed', 'dead', 'lost', 'error']);

/**
 * Finds `@Processor()` classes among the app's providers in onModuleInit, checks them
 * (queue registered, one processor per queue, one handler per job name, valid options)
 * and hands their definitions to the orchestrator. It starts nothing.
 */
@Injectable()
export class ProcessorExplorer implements OnModuleInit {
  private readonly logger = new Logger('relq');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    private readonly store: QueueStore,
    private readonly orchestrator: QueueOrchestrator,
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
  ) {}

  private explored = false;

  onModuleInit(): void {
    if (this.explored) return; // init() may run more than once on one context
    this.explored = true;
    this.orchestrator.addProcessors(this.explore());
  }

  explore(): ProcessorDefinition[] {
    const defs: ProcessorDefinition[] = [];
    const byQueue = new Map<string, string>();
    for (const wrapper of this.discovery.getProviders()) {
      const cls = classOf(wrapper);
      if (!cls) continue;
      const meta = Reflect.getMetadata(PROCESSOR_METADATA, cls) as ProcessorMetadata | undefined;
      if (!meta) continue;
      if (!this.store.has(meta.queueName) && this.isOverridden(meta.queueName)) {
        // e.g. Test.createTestingModule(...).overrideProvider(getQueueToken(name)).useValue(mock)
        this.logger.warn(
          `${cls.name}: not started, because the provider of queue '${meta.queueName}' was overridden (${getQueueToken(meta.queueName)})`,
        );
        continue;
      }
      const def = this.define(wrapper, cls, meta);
      const other = byQueue.get(def.queueName);
      if (other !== undefined) {
        throw new RelqConfigError(
          `queue '${def.queueName}' has two processors, ${other} and ${def.className}` +
            (other === def.className ? ' (the class is listed as a provider in two modules)' : '') +
            `; a queue takes one @Processor() class (its lease loop routes every job name): merge their @Process() methods into one class`,
        );
      }
      byQueue.set(def.queueName, def.className);
      defs.push(def);
    }
    return defs;
  }

  private isOverridden(queueName: string): boolean {
    try {
      this.moduleRef.get(getQueueToken(queueName), { strict: false });
      return true;
    } catch {
      return false;
    }
  }

  private define(wrapper: InstanceWrapper, cls: Type, meta: ProcessorMetadata): ProcessorDefinition {
    const className = cls.name || 'anonymous class';
    const where = `@Processor('${meta.queueName}') ${className}`;
    const entry = this.store.get(meta.queueName);
    if (!entry) {
      const known = this.store.names();
      throw new RelqConfigError(
        `${where}: queue '${meta.queueName}' is not registered. Add QueueModule.registerQueue({ name: '${meta.queueName}' }) ` +
          `to the imports of the module that provides ${className}` +
          (known.length ? ` (registered queues: ${known.join(', ')})` : ' (no queue is registered)'),
      );
    }
    const options = checkProcessorOptions(where, meta.options);
    // A handler without its own concurrency may use the whole processor's, else the default.
    const handlerDefault = options.concurrency ?? entry.options.processorDefaults.concurrency;
    const handlers: HandlerDefinition[] = [];
    const listeners: ListenerDefinition[] = [];
    const proto = cls.prototype as Record<string, unknown>;
    for (const methodName of this.scanner.getAllMethodNames(proto)) {
      const method = proto[methodName];
      if (typeof method !== 'function') continue;
      const pm = Reflect.getMetadata(PROCESS_METADATA, method) as ProcessMetadata | undefined;
      if (pm) {
        const label = pm.jobName === undefined ? 'default handlers' : `handlers for job name '${pm.jobName}'`;
        const clash = handlers.find((h) => h.jobName === pm.jobName);
        if (clash) {
          throw new RelqConfigError(
            `${where}: two ${label}, ${className}.${clash.methodName} and ${className}.${methodName}; ` +
              'each job name (and the default @Process()) takes exactly one method',
          );
        }
        const { concurrency, batch } = checkProcessOptions(
          `${where} ${className}.${methodName} @Process()`,
          pm.options,
          handlerDefault,
          options.concurrency,
        );
        handlers.push(batch ? { jobName: pm.jobName, methodName, concurrency, batch } : { jobName: pm.jobName, methodName, concurrency });
      }
      const em = Reflect.getMetadata(ON_QUEUE_EVENT_METADATA, method) as OnQueueEventMetadata | undefined;
      for (const type of em?.types ?? []) {
        if (!EVENT_TYPES.has(type)) {
          throw new RelqConfigError(
            `${where}: ${className}.${methodName} @OnQueueEvent('${String(type)}'): unknown event (known: ${[...EVENT_TYPES].join(', ')})`,
          );
        }
        listeners.push({ type, methodName });
      }
    }
    if (handlers.length === 0) {
      throw new RelqConfigError(`${where}: no @Process() method; add one (the default handler) or @Process('job-name') methods`);
    }
    const batchHandler = handlers.find((h) => h.batch);
    if (batchHandler && handlers.length > 1) {
      const others = handlers.filter((h) => h !== batchHandler).map((h) => `${className}.${h.methodName}`);
      throw new RelqConfigError(
        `${where}: ${className}.${batchHandler.methodName} is a batch handler (@Process({ batch })), so it must be the ` +
          `processor's only @Process() method, but there is also ${others.join(', ')}: one lease loop leases whole batches ` +
          'for that one method. Move the other handlers to a processor of another queue',
      );
    }
    if (options.concurrency !== undefined) {
      const over = handlers.find((h) => h.concurrency > options.concurrency!);
      if (over) {
        throw new RelqConfigError(
          `${where}: ${className}.${over.methodName} has concurrency ${over.concurrency}, above the processor's concurrency ${options.concurrency}`,
        );
      }
    }
    const settings = resolveWorkerSettings(
      where,
      // A batch processor runs as many batches at once as its handler's concurrency.
      batchHandler ? { ...options, concurrency: batchHandler.concurrency } : options,
      handlers.map((h) => h.concurrency),
      entry.options,
      this.options,
    );
    return {
      className,
      queueName: meta.queueName,
      settings,
      handlers,
      listeners,
      instances: this.instanceSource(wrapper, cls, className),
    };
  }

  private instanceSource(wrapper: InstanceWrapper, cls: Type, className: string): InstanceSource {
    if (!wrapper.isDependencyTreeStatic()) {
      // Request-scoped or durable: a fresh instance (and REQUEST = the job) per call.
      const moduleRef = this.moduleRef;
      return {
        async get(context: object): Promise<object> {
          const contextId = ContextIdFactory.getByRequest(context);
          moduleRef.registerRequestByContextId(context, contextId);
          return (await moduleRef.resolve(cls, contextId, { strict: false })) as object;
        },
      };
    }
    const instance = wrapper.instance as object | undefined | null;
    if (!instance) {
      throw new RelqConfigError(`${className}: the processor's instance could not be created (is it a provider of a loaded module?)`);
    }
    return { get: () => Promise.resolve(instance) };
  }
}

/** The class behind a provider; for useValue / useFactory providers, the instance's class. */
function classOf(wrapper: InstanceWrapper): Type | undefined {
  const fromInstance = !wrapper.metatype || wrapper.inject;
  if (fromInstance) {
    if (!wrapper.isDependencyTreeStatic()) return undefined;
    const ctor = (wrapper.instance as { constructor?: unknown } | null | undefined)?.constructor;
    return typeof ctor === 'function' && ctor !== Object ? (ctor as Type) : undefined;
  }
  return typeof wrapper.metatype === 'function' ? (wrapper.metatype as Type) : undefined;
}
