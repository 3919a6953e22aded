import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';

/** One job for produce.lua. */
export interface ProduceItem {
  id: string;
  custom: 0 | 1;
  record: string;
  priority: number;
  due: string;
  group: string;
}

/** produce.lua's answer. */
export type ProduceReply =
  | { kind: 'ok'; created: number[] }
  | { kind: 'full'; free: number; waiters: number; bound: number }
  | { kind: 'toobig'; bound: number }
  | { kind: 'inuse'; holder: string }
  | { kind: 'closed' | 'deleted' | 'configure' }
  | { kind: 'unexpected'; reply: string };

/** Adds jobs on the managed path (produce.lua): bound, waiters, groups, close, exclusive producer, stats. */
export const produceScript = queueScript({
  name: 'produce',
  file: 'backpressure/produce.lua',
  ops: ['add'],
  creates: true,
  encode: (a: {
    events: EventsFlag;
    waiter: string;
    mode: 'w' | 't';
    keep: boolean;
    waiterTtlMs: number;
    roleValue: string;
    hasSettings: boolean;
    jobs: readonly ProduceItem[];
  }) => {
    const argv: ScriptArg[] = [a.events, a.waiter, a.mode, a.keep ? 1 : 0, a.waiterTtlMs, a.roleValue, a.hasSettings ? 1 : 0, a.jobs.length];
    for (const it of a.jobs) argv.push(it.id, it.custom, it.record, it.priority, it.due, it.group);
    return argv;
  },
  decode: (reply): ProduceReply => {
    const r = reply as [string, ...unknown[]];
    switch (r[0]) {
      case 'ok':
        return { kind: 'ok', created: r[1] as number[] };
      case 'full':
        return { kind: 'full', free: Number(r[1]), waiters: Number(r[2]), bound: Number(r[3]) };
      case 'toobig':
        return { kind: 'toobig', bound: Number(r[1]) };
      case 'inuse':
        return { kind: 'inuse', holder: String(r[1]) };
      case 'closed':
      case 'deleted':
      case 'configure':
        return { kind: r[0] };
      default:
        return { kind: 'unexpected', reply: String(r[0]) };
    }
  },
});

/**
 * A blocked producer is still there (renew-waiter.lua). It writes the waiters' set, so it may
 * create a queue key: creating.
 */
export const renewWaiterScript = queueScript({
  name: 'renewWaiter',
  file: 'backpressure/renew-waiter.lua',
  ops: ['add'],
  creates: true,
  encode: (a: { waiter: string; ttlMs: number }) => [a.waiter, a.ttlMs],
  decode: () => undefined,
});

/** A blocked producer gives up (leave-waiter.lua). */
export const leaveWaiterScript = queueScript({
  name: 'leaveWaiter',
  file: 'backpressure/leave-waiter.lua',
  ops: ['add'],
  encode: (a: { waiter: string }) => [a.waiter],
  decode: () => undefined,
});

export const BACKPRESSURE_SCRIPTS = [produceScript, renewWaiterScript, leaveWaiterScript] as const;
