import type { ResolvedBatch } from './handler-options.js';
import type { SchedulerDeclaration } from '../schedulers/scheduler-options.js';
import type { ProcessorEventType, ResolvedWorkerSettings } from './processor-options.js';

/** One `@Process()` method. */
export interface HandlerDefinition {
  /** undefined: the default handler. */
  jobName: string | undefined;
  methodName: string;
  /** Jobs at once; for a batch handler, batches at once. */
  concurrency: number;
  /** Given in `@Process()`: QueueRegistry.setConcurrency() leaves it (the others follow the processor's). */
  ownConcurrency: boolean;
  /** A batch handler (`@Process({ batch })`): the processor's only handler. */
  batch?: ResolvedBatch;
}

/** One `@OnWorkerEvent()` method. */
export interface ListenerDefinition {
  type: ProcessorEventType;
  methodName: string;
}

/** Where handler calls go: the singleton, or a fresh instance per job (request-scoped). */
export interface InstanceSource {
  /** The instance to call for `context` (a job, or an event): resolved per call when scoped. */
  get(context: object): Promise<object>;
}

/** A discovered `@Processor()` class, validated and ready to run: what the explorer hands the orchestrator. */
export interface ProcessorDefinition {
  className: string;
  queueName: string;
  settings: ResolvedWorkerSettings;
  handlers: HandlerDefinition[];
  listeners: ListenerDefinition[];
  instances: InstanceSource;
  /** Schedulers declared with `@Scheduled()` on its handlers. */
  schedulers?: SchedulerDeclaration[];
}
