import { Inject, Injectable } from '@nestjs/common';
import { MAX_TIMER_MS } from '../../core/defaults.js';
import { assertBoolean, assertInt, assertOptions, assertQueueName, describe } from '../../core/validate.js';
import { AlreadyRegisteredError, RelqConfigError, validating } from '../errors.js';
import { resolveQueueOptions } from '../queues/queue-options.js';
import type { ResolvedRootOptions } from '../queues/root-options.js';
import type { AppQueue } from '../queues/app-queue.js';
import { QueueRegistry, type QueueRuntime, type RegisteredQueue } from '../queues/queue.registry.js';
import { RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import { ProcessorExplorer } from './processor.explorer.js';
import { QueueOrchestrator } from './queue.orchestrator.js';

/**
 * Queues, processors and queue-events listeners made at run time through QueueRegistry
 * (whose public methods come here): each call is checked whole before anything is created,
 * with the explorer's checks of the decorators, then handed to the orchestrator, which runs
 * them as it runs the declared ones. A queue's removal waits for its start, and its removal
 * is shared by concurrent calls.
 */
@Injectable()
export class RuntimeQueues implements QueueRuntime {
  private readonly starting = new Map<string, Promise<void>>();
  private readonly removing = new Map<string, Promise<void>>();

  constructor(
    private readonly registry: QueueRegistry,
    private readonly explorer: ProcessorExplorer,
    private readonly orchestrator: QueueOrchestrator,
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
  ) {
    registry.bindRuntime(this);
  }

  async addQueue(name: string, options: unknown): Promise<AppQueue> {
    const where = msg.addQueueWhere(name);
    this.orchestrator.assertRunning(where);
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new RelqConfigError(msg.optionsObjectNeeded(where, describe(options)));
    }
    const given = (options as { name?: unknown }).name;
    if (given !== undefined && given !== name) throw new RelqConfigError(msg.nameInOptions(where, String(given)));
    // The name first: a taken name is told as such, whatever the options.
    validating(where, () => assertQueueName(name, 'name'));
    if (this.registry.hasQueue(name)) throw new AlreadyRegisteredError(msg.queueTaken(name));
    const resolved = resolveQueueOptions({ ...options, name }, this.options, where);
    const queue = this.registry.declareQueue(resolved, true);
    const started = this.orchestrator.startQueue(name);
    this.starting.set(name, started.catch(() => undefined));
    try {
      await started;
    } catch (err) {
      // A scheduler the queue refused: nothing of the queue is left.
      await this.orchestrator.removeQueue(name, 0);
      throw err;
    } finally {
      this.starting.delete(name);
    }
    return queue;
  }

  async addProcessor(queueName: string, target: unknown, options: unknown): Promise<void> {
    const call = `addProcessor('${queueName}')`;
    this.orchestrator.assertRunning(call);
    this.runtimeEntry(call, queueName);
    const existing = this.registry.getRunners().find((r) => r.def.queueName === queueName);
    if (existing) throw new AlreadyRegisteredError(msg.processorTaken(queueName, existing.def.className));
    await this.orchestrator.addRuntimeProcessor(this.explorer.defineRuntimeProcessor(queueName, target, options));
  }

  async addQueueListener(queueName: string, instance: unknown): Promise<void> {
    const call = `addQueueListener('${queueName}')`;
    this.orchestrator.assertRunning(call);
    this.runtimeEntry(call, queueName);
    await this.orchestrator.addRuntimeListener(this.explorer.defineRuntimeListener(queueName, instance));
  }

  async removeQueue(name: string, options: unknown): Promise<void> {
    const call = `removeQueue('${name}')`;
    const drainTimeoutMs = validating(call, () => checkRemoveOptions(options));
    const entry = this.runtimeEntry(call, name);
    let removal = this.removing.get(name);
    if (!removal) {
      removal = (async () => {
        await this.starting.get(name);
        await this.orchestrator.removeQueue(entry.queue.name, drainTimeoutMs);
      })().finally(() => this.removing.delete(name));
      this.removing.set(name, removal);
    }
    return removal;
  }

  /** The entry of a queue added with addQueue(); an error names a declared or unknown one. */
  private runtimeEntry(call: string, name: string): RegisteredQueue {
    const entry = this.registry.getEntry(name);
    if (!entry) throw new RelqConfigError(`${call}: ${msg.noSuchQueue(name, this.registry.getQueueNames())}`);
    if (!entry.runtime) throw new RelqConfigError(msg.notAddedAtRunTime(call, name));
    return entry;
  }
}

/** removeQueue's options: the drain time, 0 with `drain: false`, undefined for the processor's own. */
function checkRemoveOptions(options: unknown): number | undefined {
  assertOptions('options', options, ['drain', 'drainTimeoutMs']);
  const { drain, drainTimeoutMs } = options as { drain?: boolean; drainTimeoutMs?: number };
  if (drain !== undefined) assertBoolean('drain', drain);
  if (drainTimeoutMs !== undefined) assertInt('drainTimeoutMs', drainTimeoutMs, { max: MAX_TIMER_MS });
  return drain === false ? 0 : drainTimeoutMs;
}
