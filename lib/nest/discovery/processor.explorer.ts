import { Inject, Injectable, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import { ContextIdFactory, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { ProcessorMetadata } from '../processors/processor.decorator.js';
import { RelqConfigError, validating } from '../errors.js';
import { resolveHandlerOptions } from '../processors/handler-options.js';
import { checkProcessorOptions, PROCESSOR_EVENT_TYPES, resolveWorkerSettings, type ProcessorOptions } from '../processors/processor-options.js';
import type { ResolvedRootOptions } from '../queues/root-options.js';
import { getQueueToken, LOG_CONTEXT, RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import { QueueOrchestrator } from './queue.orchestrator.js';
import { QueueRegistry, type RegisteredQueue } from '../queues/queue.registry.js';
import type { HandlerDefinition, InstanceSource, ListenerDefinition, ProcessorDefinition } from '../processors/processor-definition.js';
import type { QueueListenerDefinition } from '../events/queue-listener.js';
import { QUEUE_LISTENER_EVENT_TYPES } from '../events/queue-listener-events.js';
import { RelqMetadataAccessor } from './relq-metadata.accessor.js';
import { scheduledOn } from '../schedulers/scheduled.decorator.js';
import { checkSchedulers } from '../schedulers/scheduler-options.js';
import { WorkerHost } from '../processors/worker-host.js';
import { DEFAULT_CONCURRENCY } from '../../core/defaults.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * Finds `@Processor()` and `@QueueEventsListener()` classes among the app's providers in
 * onModuleInit, checks them (queue registered, one processor per queue, one handler per job
 * name, valid options, known events, each event decorator in its kind of class) and hands
 * their definitions to the orchestrator. It starts nothing.
 */
@Injectable()
export class ProcessorExplorer implements OnModuleInit {
  private readonly logger = new Logger(LOG_CONTEXT);
  private explored = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly metadata: RelqMetadataAccessor,
    private readonly moduleRef: ModuleRef,
    private readonly registry: QueueRegistry,
    private readonly orchestrator: QueueOrchestrator,
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
  ) {}

  onModuleInit(): void {
    if (this.explored) return; // init() may run more than once on one context
    this.explored = true;
    this.orchestrator.addProcessors(this.explore());
    this.orchestrator.addQueueListeners(this.exploreQueueListeners());
  }

  private exploreQueueListeners(): QueueListenerDefinition[] {
    const defs: QueueListenerDefinition[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const cls = classOf(wrapper);
      const meta = cls && this.metadata.getQueueEventsListenerMetadata(cls);
      if (!cls || !meta || this.skipsOverridden(cls, meta.queueName)) continue;
      const where = msg.listenerWhere(meta.queueName, cls.name || 'anonymous class');
      defs.push(this.defineQueueListener(cls, meta.queueName, where, () => this.instanceSource(wrapper, cls)));
    }
    return defs;
  }

  private defineQueueListener(cls: Type, queueName: string, where: string, instances: () => InstanceSource): QueueListenerDefinition {
    const className = cls.name || 'anonymous class';
    const entry = this.registry.getEntry(queueName);
    if (!entry) {
      throw new RelqConfigError(msg.processorQueueNotRegistered(where, queueName, className, this.registry.getQueueNames()));
    }
    const methods: QueueListenerDefinition['methods'] = [];
    const proto = cls.prototype as Record<string, unknown>;
    for (const methodName of this.scanner.getAllMethodNames(proto)) {
      const method = proto[methodName];
      if (typeof method !== 'function') continue;
      if (this.metadata.getWorkerEventTypes(method).length) throw new RelqConfigError(msg.workerEventOnListener(where, className, methodName));
      for (const type of this.metadata.getQueueEventTypes(method)) {
        if (!QUEUE_LISTENER_EVENT_TYPES.includes(type)) {
          throw new RelqConfigError(msg.unknownEvent(where, '@OnQueueEvent', className, methodName, type, QUEUE_LISTENER_EVENT_TYPES));
        }
        methods.push({ type, methodName });
      }
    }
    if (methods.length === 0) throw new RelqConfigError(msg.noQueueEventMethod(where));
    // A warning, not an error: other processes may publish the queue's events.
    if (entry.options.engine.events === false) this.logger.warn(msg.listenerOnSilentQueue(where, queueName));
    return { className, queueName, methods, instances: instances() };
  }

  private explore(): ProcessorDefinition[] {
    const defs: ProcessorDefinition[] = [];
    const byQueue = new Map<string, string>();
    for (const wrapper of this.discovery.getProviders()) {
      const cls = classOf(wrapper);
      const meta = cls && this.metadata.getProcessorMetadata(cls);
      if (!cls || !meta || this.skipsOverridden(cls, meta.queueName)) continue;
      const where = msg.processorWhere(meta.queueName, cls.name || 'anonymous class');
      const def = this.define(cls, meta, where, () => this.instanceSource(wrapper, cls));
      const other = byQueue.get(def.queueName);
      if (other !== undefined) throw new RelqConfigError(msg.twoProcessors(def.queueName, other, def.className));
      byQueue.set(def.queueName, def.className);
      defs.push(def);
    }
    return defs;
  }

  /**
   * The definition of a processor added at run time (`QueueRegistry.addProcessor`), checked as
   * a discovered `@Processor()` class is: a function is the default handler of a `WorkerHost`
   * made around it; an instance's class is scanned for `@Process()` and `@OnWorkerEvent()`.
   */
  defineRuntimeProcessor(queueName: string, target: unknown, options: unknown): ProcessorDefinition {
    let instance: object;
    if (typeof target === 'function') {
      const handler = target as (job: unknown) => unknown;
      const Handler = class extends WorkerHost {
        process(job: unknown): unknown {
          return handler(job);
        }
      };
      Object.defineProperty(Handler, 'name', { value: handler.name || 'handler' });
      instance = new Handler();
    } else if (target !== null && typeof target === 'object') {
      instance = target;
    } else {
      throw new RelqConfigError(msg.handlerNeeded(msg.addProcessorWhere(queueName, '…'), typeof target));
    }
    const cls = instance.constructor as Type;
    const where = msg.addProcessorWhere(queueName, cls.name || 'anonymous class');
    this.refuseDecorated(cls, where);
    if (options !== undefined && options !== null && typeof options === 'object' && ('scope' in options || 'durable' in options)) {
      throw new RelqConfigError(msg.scopeAtRunTime(where));
    }
    const def = this.define(cls, { queueName, options: (options ?? {}) as ProcessorOptions }, where, () => ({ get: () => Promise.resolve(instance) }));
    if (def.schedulers) throw new RelqConfigError(msg.scheduledAtRunTime(where, queueName));
    return def;
  }

  /** The definition of a queue-events listener added at run time (`QueueRegistry.addQueueListener`). */
  defineRuntimeListener(queueName: string, instance: unknown): QueueListenerDefinition {
    if (instance === null || typeof instance !== 'object') {
      throw new RelqConfigError(msg.handlerNeeded(msg.addListenerWhere(queueName, '…'), typeof instance));
    }
    const cls = instance.constructor as Type;
    const where = msg.addListenerWhere(queueName, cls.name || 'anonymous class');
    this.refuseDecorated(cls, where);
    return this.defineQueueListener(cls, queueName, where, () => ({ get: () => Promise.resolve(instance) }));
  }

  private refuseDecorated(cls: Type, where: string): void {
    const className = cls.name || 'anonymous class';
    if (this.metadata.getProcessorMetadata(cls)) throw new RelqConfigError(msg.decoratedClassGiven(where, className, '@Processor()'));
    if (this.metadata.getQueueEventsListenerMetadata(cls)) throw new RelqConfigError(msg.decoratedClassGiven(where, className, '@QueueEventsListener()'));
  }

  /**
   * A processor or queue-events listener of a queue whose provider was overridden (e.g.
   * `Test.createTestingModule(...).overrideProvider(getQueueToken(name)).useValue(fake)`) is
   * not started, with a warning: there is no Queue for it to run on.
   */
  private skipsOverridden(cls: Type, queueName: string): boolean {
    if (this.registry.hasQueue(queueName) || !this.isOverridden(queueName)) return false;
    this.logger.warn(msg.queueOverridden(cls.name, queueName, getQueueToken(queueName)));
    return true;
  }

  private isOverridden(queueName: string): boolean {
    try {
      this.moduleRef.get(getQueueToken(queueName), { strict: false });
      return true;
    } catch {
      return false;
    }
  }

  private define(cls: Type, meta: ProcessorMetadata, where: string, instances: () => InstanceSource): ProcessorDefinition {
    const className = cls.name || 'anonymous class';
    const entry = this.registry.getEntry(meta.queueName);
    if (!entry) {
      throw new RelqConfigError(msg.processorQueueNotRegistered(where, meta.queueName, className, this.registry.getQueueNames()));
    }
    const options = validating(where, () => checkProcessorOptions(meta.options));
    const { handlers, listeners } = this.scanMethods(cls, where, className, options, entry);
    if (options.file !== undefined) return this.defineSandboxed(className, meta.queueName, where, options, handlers, listeners, entry, instances);
    if (handlers.length === 0) throw new RelqConfigError(msg.noHandler(where));
    const batchHandler = handlers.find((h) => h.batch);
    if (batchHandler && handlers.length > 1) {
      const others = handlers.filter((h) => h !== batchHandler).map((h) => `${className}.${h.methodName}`);
      throw new RelqConfigError(msg.batchHandlerNotAlone(where, className, batchHandler.methodName, others));
    }
    const over = options.concurrency !== undefined && handlers.find((h) => h.concurrency > options.concurrency!);
    if (over) throw new RelqConfigError(msg.handlerAboveProcessor(where, className, over.methodName, over.concurrency, options.concurrency!));
    const settings = resolveWorkerSettings(
      // A batch processor runs as many batches at once as its handler's concurrency.
      batchHandler ? { ...options, concurrency: batchHandler.concurrency } : options,
      handlers.map((h) => h.concurrency),
      entry.options.processorDefaults,
      this.options.drainTimeoutMs,
      className,
    );
    const def: ProcessorDefinition = { className, queueName: meta.queueName, settings, handlers, listeners, instances: instances() };
    const proto = cls.prototype as Record<string, Function>;
    const schedulers = handlers.flatMap((h) => scheduledOn(proto[h.methodName]!, h.jobName));
    if (schedulers.length) def.schedulers = validating(where, () => checkSchedulers('@Scheduled()', schedulers));
    return def;
  }

  /**
   * A processor with a handler file: its jobs run in the file (docs/sandbox.md), so the class
   * has no `@Process()` method; its concurrency is its own, else `defaults.processor.concurrency`.
   */
  private defineSandboxed(
    className: string,
    queueName: string,
    where: string,
    options: ProcessorOptions,
    handlers: HandlerDefinition[],
    listeners: ListenerDefinition[],
    entry: RegisteredQueue,
    instances: () => InstanceSource,
  ): ProcessorDefinition {
    if (handlers.length) throw new RelqConfigError(msg.processWithHandlerFile(where, className, handlers.map((h) => h.methodName)));
    const concurrency = options.concurrency ?? entry.options.processorDefaults.concurrency ?? DEFAULT_CONCURRENCY;
    const settings = resolveWorkerSettings(options, [concurrency], entry.options.processorDefaults, this.options.drainTimeoutMs, className);
    return { className, queueName, settings, handlers, listeners, instances: instances() };
  }

  /** The class's `@Process()` and `@OnWorkerEvent()` methods, each checked on its own. */
  private scanMethods(cls: Type, where: string, className: string, options: ProcessorOptions, entry: RegisteredQueue) {
    // A handler without its own concurrency may use the whole processor's, else the default.
    const handlerDefault = options.concurrency ?? entry.options.processorDefaults.concurrency;
    const handlers: HandlerDefinition[] = [];
    const listeners: ListenerDefinition[] = [];
    const proto = cls.prototype as Record<string, unknown>;
    for (const methodName of this.scanner.getAllMethodNames(proto)) {
      const method = proto[methodName];
      if (typeof method !== 'function') continue;
      const pm = this.metadata.getProcessMetadata(method);
      if (pm) {
        const clash = handlers.find((h) => h.jobName === pm.jobName);
        if (clash) throw new RelqConfigError(msg.twoHandlers(where, pm.jobName, className, clash.methodName, methodName));
        const { concurrency, batch } = validating(msg.handlerWhere(where, className, methodName), () =>
          resolveHandlerOptions(pm.options, handlerDefault, options.concurrency),
        );
        const ownConcurrency = (pm.options as { concurrency?: number } | undefined)?.concurrency !== undefined;
        handlers.push({ jobName: pm.jobName, methodName, concurrency, ownConcurrency, ...(batch && { batch }) });
      }
      if (this.metadata.getQueueEventTypes(method).length) throw new RelqConfigError(msg.queueEventOnProcessor(where, className, methodName));
      for (const type of this.metadata.getWorkerEventTypes(method)) {
        if (!PROCESSOR_EVENT_TYPES.includes(type)) {
          throw new RelqConfigError(msg.unknownEvent(where, '@OnWorkerEvent', className, methodName, type, PROCESSOR_EVENT_TYPES));
        }
        listeners.push({ type, methodName });
      }
    }
    if (cls.prototype instanceof WorkerHost && !handlers.some((h) => h.methodName === 'process')) {
      // A WorkerHost's process(job) is the default handler, as if it had @Process().
      const clash = handlers.find((h) => h.jobName === undefined);
      if (clash) throw new RelqConfigError(msg.twoHandlers(where, undefined, className, clash.methodName, 'process'));
      const { concurrency } = validating(msg.handlerWhere(where, className, 'process'), () => resolveHandlerOptions({}, handlerDefault, options.concurrency));
      handlers.push({ jobName: undefined, methodName: 'process', concurrency, ownConcurrency: false });
    }
    return { handlers, listeners };
  }

  private instanceSource(wrapper: InstanceWrapper, cls: Type): InstanceSource {
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
    if (!instance) throw new RelqConfigError(msg.noInstance(cls.name || 'anonymous class'));
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
