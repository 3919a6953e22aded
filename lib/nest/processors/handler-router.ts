import { UnrecoverableError } from '../../core/errors.js';
import { NotStartedError } from '../../core/worker/outbox.js';
import type { Job } from '../../core/worker/worker.js';
import type { HandlerDefinition, ProcessorDefinition } from './processor-definition.js';
import * as msg from '../relq.messages.js';
import { Semaphore } from './semaphore.js';

/** Live counters of one handler (for status and health). */
export interface HandlerStatus {
  /** null: the default handler. */
  jobName: string | null;
  method: string;
  concurrency: number;
  /** Jobs this handler is running now. */
  active: number;
  /** Leased jobs waiting for one of this handler's slots (0 for batch handlers). */
  waiting: number;
  /**
   * Batch handlers: the batch settings and the batches running now (`concurrency` is then
   * the most batches at once, `active` the jobs in running batches).
   */
  batch?: { size: number; waitMs: number; running: number };
}

/**
 * The one handler the engine Worker of a processor class calls: routes each job by
 * `job.name` to its `@Process(name)` method or the default `@Process()`, and holds it
 * (still leased and heartbeated by the Worker) while that handler is at its concurrency.
 */
export class HandlerRouter {
  private readonly byName = new Map<string, Route>();
  private readonly fallback: Route | undefined;

  constructor(private readonly def: ProcessorDefinition) {
    let fallback: Route | undefined;
    for (const h of def.handlers) {
      const route: Route = { def: h, gate: new Semaphore(h.concurrency) };
      if (h.jobName === undefined) fallback = route;
      else this.byName.set(h.jobName, route);
    }
    this.fallback = fallback;
  }

  readonly handle = async (job: Job<unknown>): Promise<unknown> => {
    const route = this.byName.get(job.name) ?? this.fallback;
    if (!route) {
      throw new UnrecoverableError(msg.noRoute(job.name, this.def.className, this.def.queueName));
    }
    const { signal } = job;
    await route.gate.acquire(signal);
    // The handler's slot is free when it returns, or when the Worker gave up on the attempt
    // (timeout, lost lease, give-back) and aborted its signal, as the Worker's own slot is.
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      signal.removeEventListener('abort', release);
      route.gate.release();
    };
    signal.addEventListener('abort', release, { once: true });
    try {
      const instance = (await this.def.instances.get(job)) as Record<string, unknown>;
      const method = instance[route.def.methodName] as (job: Job<unknown>) => unknown;
      return await method.call(instance, job);
    } finally {
      release();
    }
  };

  /**
   * Shutdown began: jobs still waiting for a handler slot are given back to the queue at once
   * (the worker requeues them, no failed attempt) and none starts during the drain.
   */
  stopWaiting(): void {
    for (const r of this.routes()) r.gate.refuse(new NotStartedError());
  }

  /** The processor's concurrency was set: handlers without their own may use all of it. */
  setConcurrency(n: number): void {
    for (const r of this.routes()) if (!r.def.ownConcurrency) r.gate.limit = n;
  }

  /** The loop starts again. */
  reopen(): void {
    for (const r of this.routes()) r.gate.reopen();
  }

  private routes(): Route[] {
    const routes = [...this.byName.values()];
    if (this.fallback) routes.push(this.fallback);
    return routes;
  }

  status(): HandlerStatus[] {
    return this.routes().map((r) => ({
      jobName: r.def.jobName ?? null,
      method: r.def.methodName,
      concurrency: r.gate.limit,
      active: r.gate.active,
      waiting: r.gate.waiting,
    }));
  }
}

interface Route {
  def: HandlerDefinition;
  gate: Semaphore;
}
