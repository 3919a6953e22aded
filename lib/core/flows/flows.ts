import { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { CrossQueueFlowError, FlowJobExistsError } from './errors.js';
import { QueueClosedError, QueueDeletedError, QueueFullError } from '../errors.js';
import type { AddFlowOptions, FlowJob, FlowResult } from './types.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { assertJobId } from '../validate.js';
import { markCreated, planFlow, type FlowItem, type FlowPlan } from './plan.js';
import { queueKeys, queueTag } from '../redis/keys.js';
import { IdGenerator } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import type { QueueSettings } from '../settings/queue-settings.js';
import { addFlowScript, childrenResultsScript } from './scripts.js';

/**
 * Flows of parent and child jobs (docs/flows.md): a whole flow added by one script
 * (lib/core/flows/add-flow.lua), and the results a parent's children left it
 * (children-results.lua). Completing, failing and removing flow jobs happen in the settle,
 * sweep and removal scripts (lib/core/flows/flows.lua).
 */
export class Flows {
  private readonly ids = new IdGenerator();

  constructor(
    private readonly ctx: QueueContext,
    private readonly settings: QueueSettings,
  ) {}

  async addFlow<Data>(flow: FlowJob<Data>, opts: AddFlowOptions): Promise<FlowResult> {
    this.ctx.assertOpen();
    const { items, queues, result } = planFlow(flow, opts, {
      queue: this.ctx.name,
      tagOf: (name) => queueTag(this.ctx.prefix, name),
      defaults: this.ctx.defaults,
      maxPayloadBytes: this.ctx.maxPayloadBytes,
      ids: this.ids,
      now: Date.now(),
    });
    this.assertOneSlot(queues);
    if (this.settings.hasSettings) await this.settings.configure(); // a bound must be in Redis before it is checked
    if (instruments.length === 0) return this.send(items, queues, result);
    return observedAdd(
      { queue: this.ctx.name, op: 'addFlow', ids: items.map((it) => it.id) },
      (carrier) => stampAll(items, carrier),
      () => this.send(items, queues, result),
      (added) => items.map(() => added.created), // all or nothing
    );
  }

  /**
   * On a Cluster, one script writes the whole flow: its queues' keys must share a slot. A
   * single Redis takes any queues of the prefix, as they are.
   */
  private assertOneSlot(queues: FlowPlan['queues']): void {
    if (queues.length === 1 || !(this.ctx.handle.client instanceof Cluster)) return;
    const slot = calculateSlot(this.ctx.keys.tag);
    for (const q of queues) {
      if (calculateSlot(queueTag(this.ctx.prefix, q.name)) !== slot) throw new CrossQueueFlowError(this.ctx.name, q.name, q.field);
    }
  }

  /** One add-flow.lua call for the planned `items`; `result` answered with its `created`. */
  private async send(items: FlowItem[], queues: FlowPlan['queues'], result: FlowResult): Promise<FlowResult> {
    const otherKeys = queues.slice(1).flatMap((q) => queueKeys(this.ctx.prefix, q.name).all);
    const r = await this.ctx.run(addFlowScript, { events: this.ctx.eventsFlag, jobs: items, otherKeys });
    if (r.kind === 'ok') return this.ctx.replicated('addFlow', markCreated(result, r.created));
    const name = queues[r.queue - 1]!.name;
    switch (r.kind) {
      case 'exists':
        throw new FlowJobExistsError(name, r.id);
      case 'closed':
        throw new QueueClosedError(name);
      case 'deleted':
        throw new QueueDeletedError(name);
      case 'full':
        throw new QueueFullError(name, r.bound, `queue '${name}' has room for ${r.free} job(s), not for those of the flow (bound ${r.bound})`);
    }
  }

  async childrenResults(id: string): Promise<Record<string, unknown>> {
    assertJobId(id, 'id');
    return this.ctx.run(childrenResultsScript, { id });
  }
}
