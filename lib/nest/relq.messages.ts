// The messages relq/nest shows a user: configuration errors (thrown while the app starts),
// job failures it makes itself and log lines; the health report's problems are in
// health/health.messages.ts. Kept together so that the wording stays consistent and each
// call site reads as what happened, not how it is said.

import type { EventDecorator } from './events/event-method.js';
import { messageOf } from '../core/thrown.js';

const names = (list: readonly string[]) => list.join(', ');

// ---- where an option or a decorator was given -------------------------------------------

export const FOR_ROOT_OPTIONS = 'QueueModule.forRoot() options';

export function queueWhere(name: unknown): string {
  return `registerQueue(${typeof name === 'string' ? `'${name}'` : '…'})`;
}

export function processorWhere(queueName: string, className: string): string {
  return `@Processor('${queueName}') ${className}`;
}

export function handlerWhere(processor: string, className: string, methodName: string): string {
  return `${processor} ${className}.${methodName} @Process()`;
}

// ---- module wiring ----------------------------------------------------------------------

export function oneWayNeeded(where: string, ways: number): string {
  return `${where}: give exactly one of useFactory, useClass or useExisting (got ${ways})`;
}

export function queueNameNeeded(call: 'registerQueue' | 'registerQueueAsync'): string {
  return `${call}(): every queue needs a name`;
}

export function forRootNeeded(queueName: string): string {
  return `QueueModule.registerQueue('${queueName}') needs QueueModule.forRoot() or QueueModule.forRootAsync() in the imports of the root module`;
}

export function factoryGaveName(queueName: string, given: unknown): string {
  return `registerQueueAsync('${queueName}'): the factory returned name '${String(given)}'; leave name out`;
}

export function registeredTwice(queueName: string): string {
  return (
    `queue '${queueName}' is registered more than once with different options; ` +
    'register it once (e.g. in a shared module that exports QueueModule) or give every registration the same options'
  );
}

export function noSuchQueue(queueName: string, known: readonly string[]): string {
  return `no queue '${queueName}' is registered (known: ${names(known) || 'none'}); add QueueModule.registerQueue({ name: '${queueName}' })`;
}

export function terminusMissing(reason: string): string {
  return `QueueHealthIndicator needs @nestjs/terminus (npm install @nestjs/terminus), or use QueueHealthService.check(): ${reason}`;
}

// ---- processors found by discovery ------------------------------------------------------

export function processorQueueNotRegistered(where: string, queueName: string, className: string, known: readonly string[]): string {
  return (
    `${where}: queue '${queueName}' is not registered. Add QueueModule.registerQueue({ name: '${queueName}' }) ` +
    `to the imports of the module that provides ${className}` +
    (known.length ? ` (registered queues: ${names(known)})` : ' (no queue is registered)')
  );
}

export function twoProcessors(queueName: string, first: string, second: string): string {
  return (
    `queue '${queueName}' has two processors, ${first} and ${second}` +
    (first === second ? ' (the class is listed as a provider in two modules)' : '') +
    `; a queue takes one @Processor() class (its lease loop routes every job name): merge their @Process() methods into one class`
  );
}

export function twoHandlers(where: string, jobName: string | undefined, className: string, first: string, second: string): string {
  const label = jobName === undefined ? 'default handlers' : `handlers for job name '${jobName}'`;
  return `${where}: two ${label}, ${className}.${first} and ${className}.${second}; each job name (and the default @Process()) takes exactly one method`;
}

export function unknownEvent(where: string, decorator: string, className: string, methodName: string, type: unknown, known: readonly string[]): string {
  return `${where}: ${className}.${methodName} ${decorator}('${String(type)}'): unknown event (known: ${names(known)})`;
}

export function queueEventOnProcessor(where: string, className: string, methodName: string): string {
  return (
    `${where}: ${className}.${methodName} has @OnQueueEvent(), which listens to the events of every process in a ` +
    `@QueueEventsListener() class; for the events of this processor's own worker use @OnWorkerEvent()`
  );
}

export function workerEventOnListener(where: string, className: string, methodName: string): string {
  return (
    `${where}: ${className}.${methodName} has @OnWorkerEvent(), which listens to the events of a @Processor() ` +
    `class's own worker; for the events of the queue from every process use @OnQueueEvent()`
  );
}

export function listenerOnSilentQueue(where: string, queueName: string): string {
  return (
    `${where}: queue '${queueName}' is registered with events: false, so this app publishes none of its events; ` +
    'the listener hears only those of other processes that publish them'
  );
}

export function listenerWhere(queueName: string, className: string): string {
  return `@QueueEventsListener('${queueName}') ${className}`;
}

export function noQueueEventMethod(where: string): string {
  return `${where}: no @OnQueueEvent() method; add one per event to listen to`;
}

export function noHandler(where: string): string {
  return `${where}: no @Process() method; add one (the default handler) or @Process('job-name') methods`;
}

export function processWithHandlerFile(where: string, className: string, methods: readonly string[]): string {
  return `${where}: runs its jobs in its handler file (\`file\`), so ${methods.map((m) => `${className}.${m}`).join(', ')} would never run; remove @Process() or \`file\``;
}

export function batchHandlerNotAlone(where: string, className: string, methodName: string, others: readonly string[]): string {
  return (
    `${where}: ${className}.${methodName} is a batch handler (@Process({ batch })), so it must be the ` +
    `processor's only @Process() method, but there is also ${names(others)}: one lease loop leases whole batches ` +
    'for that one method. Move the other handlers to a processor of another queue'
  );
}

export function handlerAboveProcessor(where: string, className: string, methodName: string, handler: number, processor: number): string {
  return `${where}: ${className}.${methodName} has concurrency ${handler}, above the processor's concurrency ${processor}`;
}

export function noInstance(className: string): string {
  return `${className}: the processor's instance could not be created (is it a provider of a loaded module?)`;
}

export function queueOverridden(className: string, queueName: string, token: string): string {
  return `${className}: not started, because the provider of queue '${queueName}' was overridden (${token})`;
}

// ---- jobs the routers fail themselves ---------------------------------------------------

export function noRoute(jobName: string, className: string, queueName: string): string {
  return `no handler for job name '${jobName}' in ${className} (queue '${queueName}'): add @Process('${jobName}') or a default @Process() method`;
}

export function notThisBatch(jobName: string, className: string, queueName: string, handled: string): string {
  return `no handler for job name '${jobName}' in ${className} (queue '${queueName}'): its batch handler takes only jobs named '${handled}'`;
}


// ---- lease loops ------------------------------------------------------------------------

export function loopStarted(className: string, queueName: string, s: { concurrency: number; leaseMs: number; batch?: { size: number; waitMs: number } }): string {
  return (
    `${className} consumes queue '${queueName}' ` +
    (s.batch
      ? `in batches of up to ${s.batch.size} (wait ${s.batch.waitMs} ms, ${s.concurrency} at once, lease ${s.leaseMs} ms)`
      : `(concurrency ${s.concurrency}, lease ${s.leaseMs} ms)`)
  );
}

export function loopDraining(className: string, drainTimeoutMs: number, inFlight: number): string {
  return `${className}: stopping, waiting up to ${drainTimeoutMs} ms for ${inFlight} running job(s)`;
}

export function loopsNotStarted(count: number): string {
  return `workers disabled: ${count} processor(s) not started (producers only)`;
}

export function jobWillRetry(queueName: string, job: { id: string; attempt: number; maxAttempts: number }, error: string): string {
  return `job ${job.id} of '${queueName}' failed (attempt ${job.attempt}/${job.maxAttempts}), will retry: ${error}`;
}

export function jobDead(queueName: string, job: { id: string; attempt: number }, error: string): string {
  return `job ${job.id} of '${queueName}' dead-lettered after attempt ${job.attempt}: ${error}`;
}

export function leaseLost(queueName: string, jobId: string): string {
  return `job ${jobId} of '${queueName}': lease lost (it ran out); another worker may run it again`;
}

export function jobCancelled(queueName: string, jobId: string, error: string): string {
  return `job ${jobId} of '${queueName}' cancelled while it ran; its handler's outcome is dropped: ${error}`;
}

export function standingBy(className: string, error: string): string {
  return `${className}: standing by, ${error}; it takes over when that role is free`;
}

export function loopFailing(className: string, queueName: string, unreachable: boolean, error: string): string {
  return `${className}: lease loop of '${queueName}' ${unreachable ? 'cannot reach Redis' : 'fails'}, retrying: ${error}`;
}

export function loopEnded(className: string, queueName: string, reason: string): string {
  return `${className}: lease loop of '${queueName}' stopped by itself (${reason}); QueueRegistry.startWorkers() starts it again`;
}

export function loopEvent(className: string, queueName: string, type: string, reason: string | undefined): string {
  return `${className}: lease loop of '${queueName}': ${type}${reason ? ` (${reason})` : ''}`;
}

export function listenerThrew(decorator: EventDecorator, className: string, methodName: string, error: string): string {
  return `${className}.${methodName} (${decorator}()) threw: ${error}`;
}

export function queueListenerWaiting(className: string, queueName: string, error: string): string {
  return `${className}: the events of queue '${queueName}' are not subscribed yet (${error}); still trying`;
}

export function eventCallsUnfinished(className: string, decorator: EventDecorator, running: number, waitedMs: number): string {
  return `${className}: ${running} ${decorator}() call(s) still running after ${waitedMs} ms (drainTimeoutMs); the queue closes without waiting for them`;
}

export function queueListenerStarted(className: string, queueName: string, types: readonly string[]): string {
  return `${className} listening to the events of queue '${queueName}' (${names(types)})`;
}

// ---- sweepers ---------------------------------------------------------------------------

export function sweeperRecovered(queueName: string): string {
  return `sweeper of queue '${queueName}' is working again`;
}

export function leasesReclaimed(queueName: string, stalled: number, deadLettered: number): string {
  return `queue '${queueName}': ${stalled} expired lease(s) reclaimed` + (deadLettered ? `, ${deadLettered} dead-lettered (attempts exhausted)` : '');
}

export function jobsPromoted(queueName: string, promoted: number): string {
  return `queue '${queueName}': ${promoted} delayed job(s) promoted`;
}

export function sweeperFailing(queueName: string, error: string): string {
  return `sweeper of queue '${queueName}' failed (will retry): ${error}`;
}

export function schedulersFailing(queue: string, error: string): string {
  return `queue '${queue}': schedulers could not be synced or ticked (retried): ${error}`;
}

// ---- closeOnShutdown queues -------------------------------------------------------------

export function queueClosed(queueName: string, closedNow: boolean): string {
  return `queue '${queueName}' ${closedNow ? 'closed' : 'was already closed'} (closeOnShutdown)`;
}

export function closeFailed(queueName: string, error: string): string {
  return `queue '${queueName}': closeQueue() on shutdown failed, the queue stays open: ${error}`;
}

export function queueReopened(queueName: string, reopenedNow: boolean): string {
  return `queue '${queueName}' ${reopenedNow ? 'reopened' : 'is open'} (closeOnShutdown)`;
}

export function reopenFailed(queueName: string, error: string): string {
  return (
    `queue '${queueName}': reopenQueue() at startup failed (closeOnShutdown), retrying in the background; ` +
    `until it succeeds, adds to a closed queue fail with QueueClosedError: ${error}`
  );
}

export function timedOut(what: string, ms: number): string {
  return `${what} timed out after ${ms} ms`;
}

/** The message of anything thrown; never throws (lib/core/thrown.ts). */
export const textOf = messageOf;

// ---- queues made at run time (QueueRegistry.addQueue / addProcessor / removeQueue) -------------

export function addQueueWhere(name: unknown): string {
  return `addQueue(${typeof name === 'string' ? `'${name}'` : '…'})`;
}

export function addProcessorWhere(queueName: string, className: string): string {
  return `addProcessor('${queueName}') ${className}`;
}

export function addListenerWhere(queueName: string, className: string): string {
  return `addQueueListener('${queueName}') ${className}`;
}

export function queueTaken(name: string): string {
  return `addQueue('${name}'): a queue '${name}' is already registered in this app; remove it first, or look it up with getQueue('${name}')`;
}

export function processorTaken(queueName: string, existing: string): string {
  return (
    `addProcessor('${queueName}'): the queue already has its processor, ${existing}; ` +
    `a queue takes one (its lease loop routes every job name): removeQueue('${queueName}') and add it again to change it`
  );
}

export function notAddedAtRunTime(call: string, queueName: string): string {
  return (
    `${call}: queue '${queueName}' was registered with QueueModule.registerQueue, not added with addQueue(); ` +
    'only queues added at run time take processors and listeners at run time and can be removed'
  );
}

export function optionsObjectNeeded(where: string, value: string): string {
  return `${where}: options must be an object, got ${value}`;
}

export function nameInOptions(where: string, given: string): string {
  return `${where}: the options name the queue '${given}'; the name is addQueue's first argument, leave it out of the options`;
}

export function handlerNeeded(where: string, value: string): string {
  return `${where}: give a function (job) => result, or an instance of a class with @Process() methods (or extending WorkerHost); got ${value}`;
}

export function decoratedClassGiven(where: string, className: string, decorator: string): string {
  return (
    `${where}: ${className} has ${decorator}, which declares it for discovery at startup; ` +
    `an instance added at run time is an undecorated class (its options are the call's)`
  );
}

export function scopeAtRunTime(where: string): string {
  return `${where}: scope and durable are for providers Nest resolves; a processor added at run time is the instance given`;
}

export function scheduledAtRunTime(where: string, queueName: string): string {
  return `${where}: @Scheduled() is read at startup; give the schedulers in addQueue('${queueName}', { schedulers })`;
}

export function appClosing(call: string): string {
  return `${call}: the app is shutting down`;
}

export function watcherThrew(type: string, queueName: string, error: string): string {
  return `a QueueRegistry.watchQueues() listener threw on queue '${queueName}' ${type}: ${error}`;
}

export function runtimeNotReady(): string {
  return 'queues are added at run time once the app has made its providers (from onModuleInit on), not in a constructor';
}

export function queueIsPartitioned(name: string): string {
  return `queue '${name}' is a partitioned queue (registerQueue({ partitions })): look it up with getPartitionedQueue('${name}')`;
}

export function queueNotPartitioned(name: string): string {
  return `queue '${name}' is not partitioned: look it up with getQueue('${name}')`;
}

