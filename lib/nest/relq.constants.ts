/** Injection token of the `Queue` registered under `name` (use it in tests and overrides). */
export function getQueueToken(name: string): string {
  return `relq:queue:${name}`;
}

/** Injection token of the `NamedQueue` view of the queue registered under `name` (`@InjectNamedQueue`). */
export function getNamedQueueToken(name: string): string {
  return `relq:named-queue:${name}`;
}

/** Injection token of the per-queue options given to `registerQueueAsync`. */
export function getQueueOptionsToken(name: string): string {
  return `relq:queue-options:${name}`;
}

/** Injection token of the options of the queue registered under `name`, resolved over the root's. @internal */
export function getQueueConfigToken(name: string): string {
  return `relq:queue-config:${name}`;
}

/** Injection token of the provider that hands a queue's defaults to a stand-in (queue-stand-in.ts). @internal */
export function getQueueStandInToken(name: string): string {
  return `relq:queue-stand-in:${name}`;
}

/** Injection token of the raw options given to `QueueModule.forRoot` / `forRootAsync`. */
export const RELQ_MODULE_OPTIONS = 'RELQ_MODULE_OPTIONS';

/** Injection token of the validated root options, with defaults applied. */
export const RELQ_RESOLVED_OPTIONS = 'RELQ_RESOLVED_OPTIONS';

/** Metadata keys written by the decorators and read by the metadata accessor. */
export const PROCESSOR_METADATA = 'relq:processor';
/** */
export const PROCESS_METADATA = 'relq:process';
/** */
export const ON_WORKER_EVENT_METADATA = 'relq:on-worker-event';
/** */
export const QUEUE_EVENTS_LISTENER_METADATA = 'relq:queue-events-listener';
/** */
export const ON_QUEUE_EVENT_METADATA = 'relq:on-queue-event';

/** The context of every relq log line, so that an app can filter them. */
export const LOG_CONTEXT = 'relq';
