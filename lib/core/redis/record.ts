import { DEFAULT_POLICY } from '../defaults.js';
import type { Backoff, CustomBackoff, JobPolicy } from '../adds/types.js';

/**
 * The stored form of a job: "<meta json>\n<data json>". Meta keys are short because they
 * are stored once per job; values equal to the built-in defaults are left out, and so are
 * f, o, rt, c, r and p while 0 (read as 0 here and in Lua). RECORD_KEYS says what each key holds;
 * the Lua that reads and writes them is in redis/record.lua. Nested keys are never read by Lua.
 */
export interface RecordMeta {
  t: number;
  a: number;
  n?: string;
  p?: number;
  b?: string | Backoff | CustomBackoff;
  l?: number;
  x?: number;
  k?: number;
  m?: number;
  da?: number;
  dn?: number;
  i?: number;
  u?: 1;
  f?: number;
  o?: number;
  rt?: number;
  c?: number;
  r?: number;
  e?: string;
  eh?: Array<[string, number, number]>;
  g?: string;
  w?: number;
  pa?: string;
  dd?: string;
  dm?: 'u' | 't' | 'd';
  dt?: number;
  dk?: 1;
  pq?: string;
  tc?: Record<string, string>;
  po?: number;
  kl?: number;
  bk?: number;
}

/** The one legend of the meta keys (redis/record.lua's comment lists the same). */
export const RECORD_KEYS = {
  t: 'created at (producer clock, ms)',
  a: 'max attempts (always written: Lua never defaults it)',
  n: 'name',
  p: 'priority',
  b: 'backoff, as JSON text (an object in records of older versions)',
  l: "lease ms, the job's own",
  x: 'timeoutMs of one attempt (read by the worker only)',
  k: 'keep-completed ms',
  m: 'keep-completed count: at most this many completed jobs stay when it completes (settles/retention.lua)',
  da: 'keep-dead ms',
  dn: 'keep-dead count: at most this many dead jobs stay when it dies',
  i: 'idempotency window ms, custom ids only',
  u: "1 when the id is a caller's idempotency key",
  f: "failures, over the job's whole life",
  o: 'failures before the last retry or dead-letter redrive (attempts count from there)',
  rt: 'times retry() or a dead-letter redrive moved it back to pending (management/retried.lua)',
  c: 'times it completed before retry() moved it back (counted among its dequeues)',
  r: 'requeues',
  e: 'last error',
  eh: 'the last errors, oldest first: [error, at (Redis ms), attempt] (settles/failures.lua)',
  g: 'fairness group',
  w: "bits its end acts on: a flow's job, 1 child, 2 parent; a child's failure policy 4 'ignore', 8 'continue', 16 'remove' (flows/flows.lua); 32 releases its deduplication id (adds/deduplication.lua)",
  pa: "a flow child's parent id",
  pq: "a flow child's parent's queue key tag, when the parent is in another queue (flows/flows.lua)",
  dd: 'deduplication id (JobOptions.deduplication)',
  dm: "its mode: 'u' until the job ends, 't' throttle, 'd' debounce",
  dt: 'throttle: how long the id is held (ms)',
  dk: '1 with keepLastIfActive',
  tc: 'trace context of the add (a propagation carrier), only while tracing is on (relq/tracing)',
  kl: "keepLogs: most log lines kept for the job, its own (the queue's maxLogLines otherwise)",
  bk: "a partitioned queue's job routed by its group or partitionKey: that key's bucket (partitions/layout.ts), which a resize's handover looks for (partitions/handover-scan.lua)",
  po: "start (Redis ms) of the lease its last failure, requeue, step move or rejection ended: its processedOn (a completed job's is in its stored result, d)",
} as const satisfies { readonly [K in keyof Required<RecordMeta>]: string };

export function encodeRecord(meta: RecordMeta, dataJson: string): string {
  return `${JSON.stringify(meta)}\n${dataJson}`;
}

export interface DecodedRecord<Data> {
  meta: RecordMeta;
  data: Data;
}

export function decodeRecord<Data>(record: string): DecodedRecord<Data> {
  const nl = record.indexOf('\n');
  return {
    meta: JSON.parse(record.slice(0, nl)) as RecordMeta,
    data: JSON.parse(record.slice(nl + 1)) as Data,
  };
}

export function policyOf(meta: RecordMeta): JobPolicy {
  const policy: JobPolicy = {
    attempts: meta.a,
    backoff: typeof meta.b === 'string' ? (JSON.parse(meta.b) as Backoff | CustomBackoff) : (meta.b ?? DEFAULT_POLICY.backoff),
    keepCompletedMs: meta.k ?? DEFAULT_POLICY.keepCompletedMs,
    dedupWindowMs: meta.u ? (meta.i ?? DEFAULT_POLICY.dedupWindowMs) : 0,
  };
  if (meta.l !== undefined) policy.leaseMs = meta.l;
  if (meta.x !== undefined) policy.timeoutMs = meta.x;
  if (meta.m !== undefined) policy.keepCompletedCount = meta.m;
  if (meta.da !== undefined) policy.keepDeadMs = meta.da;
  if (meta.dn !== undefined) policy.keepDeadCount = meta.dn;
  return policy;
}
