import { DEFAULT_POLICY } from '../defaults.js';
import type { Backoff, JobPolicy } from '../adds/types.js';

/**
 * The stored form of a job: "<meta json>\n<data json>". Meta keys are short because
 * they are stored once per job; values equal to the built-in defaults are left out.
 * Lua reads p, l, f and a (lib/core/redis/record.lua); nested keys are never
 * one of those letters.
 */
export interface RecordMeta {
  /** created at (producer clock, ms) */
  t: number;
  /** max attempts */
  a: number;
  n?: string;
  p?: number;
  /** backoff, as JSON text (an object in records of older versions) */
  b?: string | Backoff;
  l?: number;
  /** timeoutMs of one attempt (read by the worker only) */
  x?: number;
  k?: number;
  /** idempotency window, custom ids only */
  i?: number;
  /** 1 when the id is a caller's idempotency key */
  u?: 1;
  /** failures, over the job's whole life */
  f?: number;
  /** failures before the last dead-letter redrive (attempts count from there) */
  o?: number;
  /** requeues */
  r?: number;
  /** last error */
  e?: string;
  /** the last errors, oldest first: [error, at (Redis ms), attempt] (settles/failures.lua) */
  eh?: Array<[string, number, number]>;
  /** fairness group (redis/record.lua reads it) */
  g?: string;
  /** a flow's job: 1 child, 2 parent, 4 a child whose death its parent ignores (flows/flows.lua) */
  w?: number;
  /** a flow child's parent id */
  pa?: string;
  /** trace context of the add (a propagation carrier), only while tracing is on (relq/tracing) */
  tc?: Record<string, string>;
}

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
    backoff: typeof meta.b === 'string' ? (JSON.parse(meta.b) as Backoff) : (meta.b ?? DEFAULT_POLICY.backoff),
    keepCompletedMs: meta.k ?? DEFAULT_POLICY.keepCompletedMs,
    dedupWindowMs: meta.u ? (meta.i ?? DEFAULT_POLICY.dedupWindowMs) : 0,
  };
  if (meta.l !== undefined) policy.leaseMs = meta.l;
  if (meta.x !== undefined) policy.timeoutMs = meta.x;
  return policy;
}
