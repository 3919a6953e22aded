import { FlowJobExistsError } from './errors.js';
import { QueueClosedError, QueueDeletedError, QueueFullError } from '../errors.js';
import type { AddFlowOptions, FlowJob, FlowResult } from './types.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { assertJobId } from '../validate.js';
import { markCreated, planFlow, type FlowItem } from './plan.js';
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
    const { items, result } = planFlow(flow, opts, {
      queue: this.ctx.name,
      defaults: this.ctx.defaults,
      maxPayloadBytes: this.ctx.maxPayloadBytes,
      ids: this.ids,
      now: Date.now(),
    });
    if (this.settings.hasSettings) await this.settings.configure(); // a bound must be in Redis before it is checked
    if (instruments.length === 0) return this.send(items, result);
    return observedAdd(
      { queue: this.ctx.name, op: 'addFlow', ids: items.map((it) => it.id) },
      (carrier) => stampAll(items, carrier),
      () => this.send(items, result),
      (added) => items.map(() => added.created), // all or nothing
    );
  }

  /** One add-flow.lua call for the planned `items`; `result` answered with its `created`. */
  private async send(items: FlowItem[], result: FlowResult): Promise<FlowResult> {
    const r = await this.ctx.run(addFlowScript, { events: this.ctx.eventsFlag, jobs: items });
    switch (r.kind) {
      case 'ok':
        return this.ctx.replicated('addFlow', markCreated(result, r.created));
      case 'exists':
        throw new FlowJobExistsError(this.ctx.name, r.id);
      case 'closed':
        throw new QueueClosedError(this.ctx.name);
      case 'deleted':
        throw new QueueDeletedError(this.ctx.name);
      case 'full':
        throw new QueueFullError(this.ctx.name, r.bound, `queue '${this.ctx.name}' has room for ${r.free} job(s), not for the ${items.length} of the flow (bound ${r.bound})`);
    }
  }

  async childrenResults(id: string): Promise<Record<string, unknown>> {
    assertJobId(id, 'id');
    return this.ctx.run(childrenResultsScript, { id });
  }
}
