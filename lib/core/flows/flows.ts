import { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { CrossQueueFlowError, FlowJobExistsError } from './errors.js';
import { LeaseLostError, QueueClosedError, QueueDeletedError, QueueFullError } from '../errors.js';
import type { LeaseRef } from '../leases/types.js';
import { assertLease } from '../settles/settle-items.js';
import type { AddFlowOptions, DependencyPageOptions, FlowDependencies, FlowJob, FlowJobElsewhere, FlowNode, FlowResult, GetFlowOptions } from './types.js';
import { instruments, observedAdd, stampAll } from '../instrumentation/index.js';
import { assertInt, assertJobId, assertOptions } from '../validate.js';
import { DEFAULT_FLOW_CHILDREN, DEFAULT_FLOW_DEPTH, DEFAULT_PAGE_SIZE, MAX_FLOW_PAGE } from '../defaults.js';
import { markCreated, planChildren, planFlow, type FlowItem, type FlowPlan } from './plan.js';
import { queueKeys, queueNameOf, queueTag } from '../redis/keys.js';
import { IdGenerator } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import type { QueueSettings } from '../settings/queue-settings.js';
import { addFlowScript, childrenResultsScript, getDependenciesScript, type DependencyPage } from './scripts.js';

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
    const { items, queues, result } = planFlow(flow, opts, this.planContext());
    this.assertOneSlot(queues);
    if (this.settings.hasSettings) await this.settings.configure(); // a bound must be in Redis before it is checked
    const send = async (): Promise<FlowResult> => markCreated(result, (await this.send(items, queues, ''))[0]!);
    if (instruments.length === 0) return send();
    return observedAdd(
      { queue: this.ctx.name, op: 'addFlow', ids: items.map((it) => it.id) },
      (carrier) => stampAll(items, carrier),
      send,
      (added) => items.map(() => added.created), // all or nothing
    );
  }

  /**
   * Children of the running job `lease` holds (a handler's job.addChildren()), each with its
   * own children, in one add-flow.lua call fenced by the lease: all or nothing, and nothing
   * once the lease is lost (LeaseLostError). A child whose id exists is not added again.
   */
  async addChildren<Data>(lease: LeaseRef, children: ReadonlyArray<FlowJob<Data> | FlowJobElsewhere>, opts: AddFlowOptions): Promise<FlowResult[]> {
    this.ctx.assertOpen();
    assertLease(lease);
    const { items, queues, result } = planChildren(lease.job.id, children, opts, this.planContext());
    this.assertOneSlot(queues);
    if (this.settings.hasSettings) await this.settings.configure();
    const send = async (): Promise<FlowResult[]> => {
      const created = await this.send(items, queues, lease.token);
      return result.children.map((child, k) => markCreated(child, created[k]!));
    };
    if (instruments.length === 0) return send();
    const childItems = items.slice(1); // the root is the running job: not added
    // each job is created or not with the root's child it descends from (add-flow.lua)
    const topOf: number[] = [];
    let tops = 0;
    for (const it of childItems) topOf.push(it.parent === 1 ? tops++ : topOf[it.parent - 2]!);
    return observedAdd(
      { queue: this.ctx.name, op: 'addChildren', ids: childItems.map((it) => it.id) },
      (carrier) => stampAll(childItems, carrier),
      send,
      (added) => topOf.map((k) => added[k]!.created),
    );
  }

  private planContext() {
    return {
      queue: this.ctx.name,
      tagOf: (name: string) => queueTag(this.ctx.prefix, name),
      defaults: this.ctx.defaults,
      maxPayloadBytes: this.ctx.maxPayloadBytes,
      ids: this.ids,
      now: Date.now(),
    };
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

  /**
   * One add-flow.lua call for the planned `items` (`token`: the running root's lease, '' for
   * addFlow()); answers add-flow.lua's created flags.
   */
  private async send(items: FlowItem[], queues: FlowPlan['queues'], token: string): Promise<boolean[]> {
    const otherKeys = queues.slice(1).flatMap((q) => queueKeys(this.ctx.prefix, q.name).all);
    await Promise.all(queues.slice(1).map((q) => this.ctx.registerOther(q.name)));
    const op = token === '' ? 'addFlow' : 'addChildren';
    const r = await this.ctx.run(addFlowScript, { events: this.ctx.eventsFlag, token, jobs: items, otherKeys }, op);
    if (r.kind === 'ok') return this.ctx.replicated(op, r.created);
    if (r.kind === 'lost') throw new LeaseLostError(items[0]!.id);
    const name = queues[r.queue - 1]!.name;
    switch (r.kind) {
      case 'exists':
        throw new FlowJobExistsError(name, r.id);
      case 'closed':
        throw new QueueClosedError(name);
      case 'deleted':
        if (r.queue > 1) await this.ctx.withdrawOther(name); // listed for this call: not after all
        throw new QueueDeletedError(name);
      case 'full':
        throw new QueueFullError(name, r.bound, `queue '${name}' has room for ${r.free} job(s), not for those of the flow (bound ${r.bound})`);
    }
  }

  async childrenResults(id: string): Promise<Record<string, unknown>> {
    assertJobId(id, 'id');
    return this.ctx.run(childrenResultsScript, { id });
  }

  async getDependencies(id: string, opts: DependencyPageOptions): Promise<FlowDependencies> {
    assertJobId(id, 'id');
    assertOptions('getDependencies options', opts, ['offset', 'limit']);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? DEFAULT_PAGE_SIZE;
    assertInt('offset', offset);
    assertInt('limit', limit, { min: 1, max: MAX_FLOW_PAGE });
    const page = await this.ctx.run(getDependenciesScript, { tag: '', id, offset, limit });
    return { state: page.state, total: page.total, children: page.children.map((c) => ({ id: c.id, queue: this.nameOf(c.tag, this.ctx.name), state: c.state })) };
  }

  /**
   * The flow below `id`, across queues: one get-dependencies.lua call per parent read, level
   * by level (a parent in another queue of the slot is read through this queue's connection).
   */
  async getFlow(id: string, opts: GetFlowOptions): Promise<FlowNode | null> {
    assertJobId(id, 'id');
    assertOptions('getFlow options', opts, ['depth', 'maxChildren']);
    const depth = opts.depth ?? DEFAULT_FLOW_DEPTH;
    const maxChildren = opts.maxChildren ?? DEFAULT_FLOW_CHILDREN;
    assertInt('depth', depth);
    assertInt('maxChildren', maxChildren, { min: 1, max: MAX_FLOW_PAGE });
    const read = (tag: string, parentId: string): Promise<DependencyPage> => this.ctx.run(getDependenciesScript, { tag, id: parentId, offset: 0, limit: maxChildren }, 'getFlow');
    const first = await read('', id);
    if (first.state === null) return null;
    const root: FlowNode = { id, queue: this.ctx.name, state: first.state, total: first.total, children: [] };
    let level = [{ node: root, tag: this.ctx.keys.tag, page: first }];
    for (let d = 0; d < depth && level.length > 0; d++) {
      const next: typeof level = [];
      for (const { node, tag, page } of level) {
        for (const c of page.children) {
          const childTag = c.tag || tag;
          const child: FlowNode = { id: c.id, queue: this.nameOf(childTag, node.queue), state: c.state, total: c.total, children: [] };
          node.children.push(child);
          if (c.total > 0 && d + 1 < depth) next.push({ node: child, tag: childTag, page: await read(childTag === this.ctx.keys.tag ? '' : childTag, c.id) });
        }
      }
      level = next;
    }
    return root;
  }

  /** The name of the queue of `tag` ('' the queue `parent`). */
  private nameOf(tag: string, parent: string): string {
    return tag === '' ? parent : queueNameOf(this.ctx.prefix, tag);
  }
}
