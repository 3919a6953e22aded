import { queueScript, type AddFlag, type EventsFlag, type ScriptArg } from '../redis/script-def.js';

/** One job for produce.lua. */
export interface ProduceItem {
  id: string;
  custom: 0 | 1;
  record: string;
  priority: number;
  due: string;
  group: string;
  /** Its record holds a deduplication id (adds/deduplication.lua). */
  dedup?: boolean;
}

/** The flag add-jobs.lua reads per job: 1 a custom id, + 2 a deduplication id in its record. */
export function itemFlag(it: ProduceItem): number {
  return it.dedup ? it.custom + 2 : it.custom;
}

/**
 * What add-jobs.lua answers per job: 1 created, 0 a duplicate custom id, or for a job whose
 * deduplication id another job holds, 'i' / 'r' / 'd' and that job's id (decoded by the producer).
 */
export type AddReply = number | string;

/** produce.lua's answer. */
export type ProduceReply =
  | { kind: 'ok'; created: AddReply[] }
  | { kind: 'full'; free: number; waiters: number; bound: number }
  | { kind: 'toobig'; bound: number }
  | { kind: 'inuse'; holder: string }
  | { kind: 'closed' | 'deleted' | 'configure' | 'moved' }
  | { kind: 'unexpected'; reply: string };

/** Adds jobs on the managed path (produce.lua): bound, waiters, groups, close, exclusive producer, stats. */
export const produceScript = queueScript({
  name: 'produce',
  file: 'backpressure/produce.lua',
  ops: ['add'],
  creates: true,
  encode: (a: {
    events: AddFlag;
    waiter: string;
    mode: 'w' | 't';
    keep: boolean;
    waiterTtlMs: number;
    roleValue: string;
    hasSettings: boolean;
    jobs: readonly ProduceItem[];
  }) => {
    const argv: ScriptArg[] = [a.events, a.waiter, a.mode, a.keep ? 1 : 0, a.waiterTtlMs, a.roleValue, a.hasSettings ? 1 : 0, a.jobs.length];
    for (const it of a.jobs) argv.push(it.id, itemFlag(it), it.record, it.priority, it.due, it.group);
    return argv;
  },
  decode: (reply): ProduceReply => {
    const r = reply as [string, ...unknown[]];
    switch (r[0]) {
      case 'ok':
        return { kind: 'ok', created: r[1] as AddReply[] };
      case 'full':
        return { kind: 'full', free: Number(r[1]), waiters: Number(r[2]), bound: Number(r[3]) };
      case 'toobig':
        return { kind: 'toobig', bound: Number(r[1]) };
      case 'inuse':
        return { kind: 'inuse', holder: String(r[1]) };
      case 'closed':
      case 'deleted':
      case 'configure':
      case 'moved':
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
