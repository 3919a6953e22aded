import { DEFAULT_SWEEP_LIMIT } from '../defaults.js';
import { rememberTraceContext } from '../instrumentation/index.js';
import type { SweepResult } from '../management/read-types.js';
import { decodeRecord, policyOf } from '../redis/record.js';
import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import { POLICY_DEFAULTS_ARG, pushSettleBatch, settledOf, type SettleBatch } from '../settles/settle-items.js';
import type { LeaseStep } from './lease-step.js';
import type { Lease, LeasedJob, LeaseRef } from './types.js';

/** lease.lua's reply head: now, nextDue (-1: none), state, ghosts, then 4 fields per lease. */
const HEAD_FIELDS = 4;
const LEASE_FIELDS = 4;
const STATE = { open: 0, paused: 1, closed: 2, deleted: 3 } as const;

/** Settles `items` and leases up to `count` more: the worker's hot path (lease.lua). */
export const leaseScript = queueScript({
  name: 'lease',
  file: 'leases/lease.lua',
  ops: ['lease'],
  extraKeys: 1,
  extraKeysOf: (keys, a) => [keys.request(a.reqId)],
  encode: (a: { events: EventsFlag; reqId: string; count: number; leaseMs: number; woken: boolean; worker: string; items: SettleBatch; parentQueueOf: ParentQueueOf }) => {
    const argv: ScriptArg[] = [a.events, a.reqId, a.count, a.leaseMs, a.woken ? 1 : 0, DEFAULT_SWEEP_LIMIT, POLICY_DEFAULTS_ARG, a.worker];
    pushSettleBatch(argv, a.items);
    return argv;
  },
  decode: (reply, a): LeaseStep<unknown> => {
    const [settled, head] = reply as [number[], Array<string | number>];
    const now = Number(head[0]);
    const nextDue = Number(head[1]);
    const leases: Array<Lease<unknown>> = [];
    for (let i = HEAD_FIELDS; i < head.length; i += LEASE_FIELDS) {
      const deadline = Number(head[i + 2]);
      leases.push({ job: toLeasedJob(String(head[i]), String(head[i + 3]), now, a.parentQueueOf), token: String(head[i + 1]), deadline, leaseMs: deadline - now });
    }
    return {
      settled: settledOf(a.items, settled),
      leases,
      now,
      nextDue: nextDue >= 0 ? nextDue : undefined,
      paused: head[2] === STATE.paused,
      closed: head[2] === STATE.closed,
      deleted: head[2] === STATE.deleted,
      ghosts: Number(head[3]),
    };
  },
});

/** The name of a flow child's parent's queue from its record's meta pq (QueueContext.parentQueueOf). */
export type ParentQueueOf = (pq: string | undefined) => string;

function toLeasedJob(id: string, record: string, now: number, parentQueueOf: ParentQueueOf): LeasedJob<unknown> {
  const { meta, data } = decodeRecord<unknown>(record);
  const job: { -readonly [K in keyof LeasedJob<unknown>]: LeasedJob<unknown>[K] } = {
    id,
    name: meta.n ?? '',
    data,
    attempt: (meta.f ?? 0) - (meta.o ?? 0) + 1,
    maxAttempts: meta.a,
    priority: meta.p ?? 0,
    requeues: meta.r ?? 0,
    createdAt: meta.t,
    leasedAt: now,
    policy: policyOf(meta),
  };
  if (meta.e !== undefined) job.lastError = meta.e;
  if (meta.g !== undefined) job.group = meta.g;
  if (meta.kl !== undefined) job.keepLogs = meta.kl;
  if (meta.tc !== undefined) rememberTraceContext(job, meta.tc);
  if (meta.pa !== undefined) job.parent = { id: meta.pa, queue: parentQueueOf(meta.pq) };
  return job;
}

/**
 * Extends leases (touch.lua) by `extendMs` from now, else each by its own `leaseMs` (the
 * caller checked it is there): each one's new deadline, or where its token no longer holds
 * the job the reason of the cancel() that ended the lease (-1 for a cancel without one), or 0. `worker`: a worker's registration ('' none,
 * lib/core/workers/presence.ts).
 */
export const touchScript = queueScript({
  name: 'touch',
  file: 'leases/touch.lua',
  ops: ['touch'],
  encode: (a: { leases: ReadonlyArray<LeaseRef>; extendMs: number | undefined; worker: string }) => {
    const argv: ScriptArg[] = [a.worker, a.leases.length];
    for (const l of a.leases) argv.push(l.job.id, l.token, a.extendMs ?? l.leaseMs!);
    return argv;
  },
  decode: (reply) => reply as Array<number | string>,
});

/** One pass of housekeeping (sweep.lua), with the ids of the expired leases it returned. */
export const sweepScript = queueScript({
  name: 'sweep',
  file: 'leases/sweep.lua',
  ops: ['sweep'],
  encode: (a: { events: EventsFlag; limit: number }) => [a.events, a.limit],
  decode: (reply): { result: SweepResult; stalledIds: string[] } => {
    const r = reply as [number, number, number, number, number, number, string[], number];
    return {
      result: { stalled: r[0], deadLettered: r[1], promoted: r[2], completedRemoved: r[3], deadRemoved: r[7], dedupForgotten: r[4] },
      stalledIds: r[6],
    };
  },
});

export const LEASE_SCRIPTS = [leaseScript, touchScript, sweepScript] as const;
