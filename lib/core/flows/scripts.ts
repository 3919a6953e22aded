import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import type { FlowItem } from './plan.js';
import type { JobState } from '../management/read-types.js';

/** add-flow.lua's answer. */
export type AddFlowReply =
  | { kind: 'ok'; created: boolean[] }
  | { kind: 'lost' }
  | { kind: 'exists'; id: string; queue: number }
  | { kind: 'closed' | 'deleted'; queue: number }
  | { kind: 'full'; free: number; bound: number; queue: number };

/**
 * Adds a whole flow, all or nothing (add-flow.lua); `otherKeys`: the keys of the flow's other
 * queues, 15 each, passed after the queue's own. With `token`, the root is a running job leased
 * with it (addChildren()): `created` answers per child of the root; else one flag for the flow.
 */
export const addFlowScript = queueScript({
  name: 'addFlow',
  file: 'flows/add-flow.lua',
  ops: ['addFlow', 'addChildren'],
  creates: true,
  extraKeysOf: (_keys, a) => [...a.otherKeys],
  encode: (a: { events: EventsFlag; token: string; jobs: readonly FlowItem[]; otherKeys: readonly string[] }) => {
    const argv: ScriptArg[] = [a.events, a.token, a.jobs.length];
    for (const it of a.jobs) argv.push(it.id, it.custom, it.record, it.priority, it.due, it.group, it.parent, it.queue);
    return argv;
  },
  decode: (reply): AddFlowReply => {
    const r = reply as [string, ...Array<string | number>];
    switch (r[0]) {
      case 'ok':
        return { kind: 'ok', created: r.slice(1).map((c) => c === 1) };
      case 'lost':
        return { kind: 'lost' };
      case 'exists':
        return { kind: 'exists', id: String(r[1]), queue: Number(r[2]) };
      case 'closed':
      case 'deleted':
        return { kind: r[0], queue: r.length > 1 ? Number(r[1]) : 1 };
      default:
        return { kind: 'full', free: Number(r[1]), bound: Number(r[2]), queue: Number(r[3]) };
    }
  },
});

/** The results a flow parent's completed children left it (children-results.lua), by child id. */
export const childrenResultsScript = queueScript({
  name: 'childrenResults',
  file: 'flows/children-results.lua',
  ops: ['childrenResults'],
  readOnly: true,
  encode: (a: { id: string }) => [a.id],
  decode: (reply): Record<string, unknown> => {
    const r = reply as Array<string | number>;
    const pairs: Array<[string, unknown]> = [];
    for (let i = 1; i < r.length; i += 2) pairs.push([String(r[i]), JSON.parse(String(r[i + 1]))]);
    return Object.fromEntries(pairs); // own keys, whatever an id is (even '__proto__')
  },
});

/** get-dependencies.lua's answer, queue tags as they are ('' the parent's queue). */
export interface DependencyPage {
  state: JobState | null;
  total: number;
  children: Array<{ id: string; tag: string; state: JobState | null; total: number }>;
}

/** One page of a flow parent's children with their states (get-dependencies.lua). */
export const getDependenciesScript = queueScript({
  name: 'getDependencies',
  file: 'flows/get-dependencies.lua',
  ops: ['getDependencies', 'getFlow'],
  readOnly: true,
  encode: (a: { tag: string; id: string; offset: number; limit: number }) => [a.tag, a.id, a.offset, a.limit],
  decode: (reply): DependencyPage => {
    const r = reply as Array<string | number>;
    const children: DependencyPage['children'] = [];
    for (let i = 2; i < r.length; i += 4) {
      children.push({ id: String(r[i]), tag: String(r[i + 1]), state: (String(r[i + 2]) || null) as JobState | null, total: Number(r[i + 3]) });
    }
    return { state: (String(r[0]) || null) as JobState | null, total: Number(r[1]), children };
  },
});

export const FLOW_SCRIPTS = [addFlowScript, childrenResultsScript, getDependenciesScript] as const;
