import { FlowJobExistsError } from './errors.js';
import { QueueClosedError, QueueDeletedError, QueueFullError } from '../errors.js';
import type { AddFlowOptions, FlowJob, FlowResult } from './types.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { assertJobId } from '../validate.js';
import { markCreated, planFlow, type FlowItem } from './plan.js';
import { IdGenerator } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import type { QueueSettings } from '../settings/queue-settings.js';

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
    const args: Array<string | number> = [this.ctx.eventsFlag, items.length];
    for (const it of items) args.push(it.id, it.custom, it.record, it.priority, it.due, it.group, it.parent);
    const r = (await this.ctx.run('addFlow', 'addFlow', args)) as [string, ...Array<string | number>];
    switch (r[0]) {
      case 'ok':
        return this.ctx.replicated('addFlow', markCreated(result, r[1] === 1));
      case 'exists':
        throw new FlowJobExistsError(this.ctx.name, String(r[1]));
      case 'closed':
        throw new QueueClosedError(this.ctx.name);
      case 'deleted':
        throw new QueueDeletedError(this.ctx.name);
      default:
        throw new QueueFullError(this.ctx.name, Number(r[2]), `queue '${this.ctx.name}' has room for ${r[1]} job(s), not for the ${items.length} of the flow (bound ${r[2]})`);
    }
  }

  async childrenResults(id: string): Promise<Record<string, unknown>> {
    assertJobId(id, 'id');
    const r = (await this.ctx.run('childrenResults', 'childrenResults', [id])) as Array<string | number>;
    const pairs: Array<[string, unknown]> = [];
    for (let i = 1; i < r.length; i += 2) pairs.push([String(r[i]), JSON.parse(String(r[i + 1]))]);
    return Object.fromEntries(pairs); // own keys, whatever an id is (even '__proto__')
  }
}
