import { MAX_FLOW_JOBS } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { AddFlowOptions, ChildFailurePolicy, FlowJob, FlowResult } from './types.js';
import { encodeRecord } from '../redis/record.js';
import type { JobPolicy } from '../adds/types.js';
import { assertOptions, assertQueueName, toJson } from '../validate.js';
import type { IdGenerator } from '../adds/ids.js';
import { prepareJob } from '../adds/job-options.js';
import type { ProduceItem } from '../backpressure/scripts.js';

const FLOW_KEYS = ['data', 'opts', 'children', 'onFailure', 'queue'] as const;
/** A child's failure policy and its bit in record meta w (flows/flows.lua); 'fail' has none. */
const POLICY_BITS: Readonly<Record<ChildFailurePolicy, number>> = { fail: 0, ignore: 4, continue: 8, remove: 16 };

/** One job of a flow as add-flow.lua takes it, parents before their children. */
export interface FlowItem extends ProduceItem {
  /** 1-based position of its parent in the list, 0 for the root. */
  parent: number;
  /** 1-based position of its queue in the plan's `queues`. */
  queue: number;
}

export interface FlowPlan {
  items: FlowItem[];
  /** The flow's queues, the one `addFlow()` is called on first, and where each was first named. */
  queues: Array<{ name: string; field: string }>;
  /** The ids in the flow's shape (`created` filled in by the caller). */
  result: FlowResult;
}

interface Ctx {
  queue: string;
  /** A queue's key tag (redis/keys.ts queueTag), for a child's meta pq. */
  tagOf: (queue: string) => string;
  defaults: JobPolicy;
  maxPayloadBytes: number;
  ids: IdGenerator;
  now: number;
}

/**
 * Checks a whole flow and lays it out for add-flow.lua: every job's options, payload and
 * place, before anything is written (the script itself checks only what Redis knows).
 */
export function planFlow<Data>(flow: FlowJob<Data>, opts: AddFlowOptions, ctx: Ctx, rootField = 'flow'): FlowPlan {
  assertOptions(rootField === '' ? 'addChildren options' : 'addFlow options', opts, ['onChildFailure']);
  const fallback = opts.onChildFailure ?? 'fail';
  checkPolicy('onChildFailure', fallback);
  const items: FlowItem[] = [];
  const customIds = new Set<string>();
  const root: FlowResult = { id: '', created: false, children: [] };
  // iterative walk: a deep flow cannot overflow the stack
  const queues = [{ name: ctx.queue, field: 'queue' }];
  const stack: Array<{ job: unknown; field: string; parent: number; out: FlowResult }> = [{ job: flow, field: rootField, parent: 0, out: root }];
  while (stack.length > 0) {
    const { job, field, parent, out } = stack.pop()!;
    if (items.length >= MAX_FLOW_JOBS) throw new ValidationError('flow', `has more than ${MAX_FLOW_JOBS} jobs`);
    assertOptions(field, job, FLOW_KEYS);
    const j = job as unknown as FlowJob<Data>;
    // a job without `queue` is in its parent's (the root: in the one addFlow() is called on)
    const parentQueue = parent > 0 ? queues[items[parent - 1]!.queue - 1]!.name : ctx.queue;
    if (j.queue !== undefined) assertQueueName(j.queue, `${field}.queue`);
    const queueName = j.queue ?? parentQueue;
    let queue = queues.findIndex((q) => q.name === queueName) + 1;
    if (queue === 0) queue = queues.push({ name: queueName, field: `${field}.queue` });
    if (j.children !== undefined && !Array.isArray(j.children)) throw new ValidationError(`${field}.children`, 'must be an array of flow jobs');
    const isParent = (j.children?.length ?? 0) > 0;
    const o = j.opts ?? {};
    if ((o as { waitMs?: unknown }).waitMs !== undefined) throw new ValidationError(`${field}.opts.waitMs`, 'addFlow never waits for room: a bounded queue without room refuses the flow');
    if ((o as { deduplication?: unknown }).deduplication !== undefined) {
      throw new ValidationError(`${field}.opts.deduplication`, 'is not for flows: a flow is added whole, and its jobs run as their parents wait for them; a root jobId makes the whole flow a duplicate');
    }
    if (isParent && (o.delayMs !== undefined || o.runAt !== undefined || o.lifo)) {
      throw new ValidationError(`${field}.opts`, 'a parent becomes pending when its children completed: delayMs, runAt and lifo are for jobs without children');
    }
    let failure = fallback;
    if (j.onFailure !== undefined) {
      if (parent === 0) throw new ValidationError(`${field}.onFailure`, "is a child's option: the root has no parent");
      checkPolicy(`${field}.onFailure`, j.onFailure);
      failure = j.onFailure;
    }
    const prepared = prepareJob(`${field}.opts`, o, ctx.defaults, ctx.now);
    const dataJson = toJson(`${field}.data`, j.data, ctx.maxPayloadBytes);
    if (prepared.id !== undefined) {
      if (customIds.has(prepared.id)) throw new ValidationError(`${field}.opts.jobId`, `'${prepared.id}' appears twice in the flow`);
      customIds.add(prepared.id);
    }
    const id = prepared.id ?? ctx.ids.next();
    const meta = prepared.meta;
    // w: 1 child, 2 parent, and a child's failure policy (flows/flows.lua)
    const w = (parent > 0 ? 1 + POLICY_BITS[failure] : 0) + (isParent ? 2 : 0);
    if (w > 0) meta.w = w;
    if (parent > 0) meta.pa = items[parent - 1]!.id;
    if (parent > 0 && queueName !== parentQueue) meta.pq = ctx.tagOf(parentQueue);
    items.push({ id, custom: prepared.id === undefined ? 0 : 1, record: encodeRecord(meta, dataJson), priority: prepared.priority, due: prepared.due, group: prepared.group, parent, queue });
    out.id = id;
    const position = items.length;
    const kids = j.children ?? [];
    const outs = kids.map((): FlowResult => ({ id: '', created: false, children: [] }));
    out.children = outs;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ job: kids[i], field: `${field === '' ? '' : `${field}.`}children[${i}]`, parent: position, out: outs[i]! });
  }
  return { items, queues, result: root };
}

/**
 * Lays out the children a running job adds (addChildren()) as a flow whose root is that job:
 * add-flow.lua does not write the root, only gives it the children. Errors name the children
 * as given (`children[0].opts`).
 */
export function planChildren<Data>(parentId: string, children: unknown, opts: AddFlowOptions, ctx: Ctx): FlowPlan {
  if (!Array.isArray(children) || children.length === 0) throw new ValidationError('children', 'must be a non-empty array of flow jobs');
  return planFlow({ data: null, opts: { jobId: parentId }, children: children as Array<FlowJob<Data | null>> }, opts, ctx, '');
}

function checkPolicy(field: string, value: unknown): asserts value is ChildFailurePolicy {
  if (typeof value !== 'string' || !Object.hasOwn(POLICY_BITS, value)) throw new ValidationError(field, "must be 'fail', 'ignore', 'continue' or 'remove'");
}

/** Sets `created` on every node of a flow's result. */
export function markCreated(root: FlowResult, created: boolean): FlowResult {
  const stack = [root];
  for (let r = stack.pop(); r; r = stack.pop()) {
    r.created = created;
    stack.push(...r.children);
  }
  return root;
}
