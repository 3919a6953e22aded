import { DEFAULT_POLICY, MAX_KEEP_COUNT, MAX_LOG_LINES, MAX_MS, MAX_PRIORITY, MAX_RUN_AT, MAX_TIMER_MS } from '../defaults.js';
import { assertLeaseMs } from '../leases/lease-ms.js';
import { ValidationError } from '../errors.js';
import type { RecordMeta } from '../redis/record.js';
import { BUCKET } from '../partitions/partition-option.js';
import type { Backoff, CustomBackoff, DeduplicationMode, JobPolicy, Retention } from './types.js';
import {
  assertBoolean,
  assertInt,
  assertJobId,
  assertNewJobId,
  assertNumber,
  assertOptions,
  assertGroupName,
  assertString,
} from '../validate.js';

/**
 * Job options, checked, and the queue's job defaults applied to them: the one validator of
 * what add(), addBulk(), flows and schedulers are given per job (queue options: options.ts;
 * default values: lib/core/defaults.ts). Everything is checked before anything is written.
 */

const JOB_OPTION_KEYS = [
  'jobId',
  'name',
  'delayMs',
  'runAt',
  'priority',
  'attempts',
  'backoff',
  'leaseMs',
  'keepCompletedMs',
  'keepCompleted',
  'keepDead',
  'dedupWindowMs',
  'group',
  'timeoutMs',
  'waitMs',
  'lifo',
  'deduplication',
  'keepLogs',
] as const;
const POLICY_KEYS = ['attempts', 'backoff', 'leaseMs', 'timeoutMs', 'keepCompletedMs', 'keepCompleted', 'keepDead', 'dedupWindowMs'] as const;
const RETENTION_KEYS = ['count', 'ageMs'] as const;
const BACKOFF_KEYS = ['type', 'delayMs', 'maxDelayMs', 'jitter'] as const;
const CUSTOM_BACKOFF_KEYS = ['type', 'strategy'] as const;
const DEDUPLICATION_KEYS = ['id', 'mode', 'ttlMs', 'keepLastIfActive'] as const;
/** Each mode as a record's meta dm holds it (adds/deduplication.lua). */
const DEDUPLICATION_MODES: Readonly<Record<DeduplicationMode, 'u' | 't' | 'd'>> = { untilEnded: 'u', throttle: 't', debounce: 'd' };
/** Meta w bit: the job's end releases its deduplication id (dedupIds.ENDS in adds/deduplication.lua). */
const DEDUP_ENDS = 32;

declare const CHECKED: unique symbol;
/** Job defaults as given, checked (a number backoff made a fixed one): only checkPolicyOptions makes one. */
export type CheckedPolicy = Partial<JobPolicy> & { readonly [CHECKED]: true };

/** What policyOver made (and the built-in policy): checked, frozen, so taken as they are. */
const RESOLVED = new WeakSet<object>([DEFAULT_POLICY]);

/** Checks job defaults and merges them over `base`, a resolved policy (the built-in one unless given). */
export function resolvePolicy(field: string, defaults: unknown, base: Readonly<JobPolicy> = DEFAULT_POLICY): Readonly<JobPolicy> {
  return defaults === undefined ? base : policyOver(base, checkPolicyOptions(field, defaults));
}

/** Job defaults checked alone, to be merged later (policyOver). */
export function checkPolicyOptions(field: string, defaults: unknown): CheckedPolicy {
  assertOptions(field, defaults, POLICY_KEYS);
  return checkPolicy(field, defaults) as CheckedPolicy;
}

/** Checked job defaults over a resolved policy. */
export function policyOver(base: Readonly<JobPolicy>, own: CheckedPolicy): Readonly<JobPolicy> {
  const policy = Object.freeze({ ...base, ...own });
  RESOLVED.add(policy);
  return policy;
}

/** True for a policy resolvePolicy made: passed on from where it was checked, it is not checked again. */
export function isResolvedPolicy(value: unknown): value is Readonly<JobPolicy> {
  return typeof value === 'object' && value !== null && RESOLVED.has(value);
}

function checkPolicy(field: string, o: Record<string, unknown>): Partial<JobPolicy> {
  const out: Partial<JobPolicy> = {};
  if (o.attempts !== undefined) {
    assertInt(`${field}.attempts`, o.attempts, { min: 1, max: 1_000_000 });
    out.attempts = o.attempts;
  }
  if (o.backoff !== undefined) out.backoff = checkBackoff(`${field}.backoff`, o.backoff);
  if (o.leaseMs !== undefined) {
    assertLeaseMs(`${field}.leaseMs`, o.leaseMs);
    out.leaseMs = o.leaseMs;
  }
  if (o.timeoutMs !== undefined) {
    assertInt(`${field}.timeoutMs`, o.timeoutMs, { min: 1, max: MAX_TIMER_MS });
    out.timeoutMs = o.timeoutMs;
  }
  if (o.keepCompletedMs !== undefined) {
    assertInt(`${field}.keepCompletedMs`, o.keepCompletedMs, { max: MAX_MS });
    out.keepCompletedMs = o.keepCompletedMs;
  }
  if (o.keepCompleted !== undefined) {
    const { count, ageMs } = checkRetention(`${field}.keepCompleted`, o.keepCompleted);
    // one rule under two names: keepCompletedMs is keepCompleted.ageMs
    if (ageMs !== undefined && o.keepCompletedMs !== undefined) {
      throw new ValidationError(field, 'give keepCompletedMs or keepCompleted.ageMs, not both: they are the same rule');
    }
    if (ageMs !== undefined) out.keepCompletedMs = ageMs;
    if (count !== undefined) out.keepCompletedCount = count;
  }
  if (o.keepDead !== undefined) {
    const { count, ageMs } = checkRetention(`${field}.keepDead`, o.keepDead);
    if (ageMs !== undefined) out.keepDeadMs = ageMs;
    if (count !== undefined) out.keepDeadCount = count;
  }
  if (o.dedupWindowMs !== undefined) {
    assertInt(`${field}.dedupWindowMs`, o.dedupWindowMs, { max: MAX_MS });
    out.dedupWindowMs = o.dedupWindowMs;
  }
  return out;
}

function checkRetention(field: string, value: unknown): Retention {
  assertOptions(field, value, RETENTION_KEYS);
  const { count, ageMs } = value;
  if (count !== undefined) {
    if (count === 0) throw new ValidationError(`${field}.count`, 'must be at least 1 (to keep none, give ageMs: 0)');
    assertInt(`${field}.count`, count, { min: 1, max: MAX_KEEP_COUNT });
  }
  if (ageMs !== undefined) assertInt(`${field}.ageMs`, ageMs, { max: MAX_MS });
  return { count, ageMs };
}

function checkBackoff(field: string, value: unknown): Backoff | CustomBackoff {
  if (typeof value === 'number') {
    assertInt(field, value, { max: MAX_MS });
    return { type: 'fixed', delayMs: value, jitter: 0 };
  }
  if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'custom') {
    // the strategy is the workers' to know: only its name is checked here
    assertOptions(field, value, CUSTOM_BACKOFF_KEYS);
    assertString(`${field}.strategy`, value.strategy, 128);
    if (value.strategy === '') throw new ValidationError(`${field}.strategy`, 'must not be empty');
    return { type: 'custom', strategy: value.strategy };
  }
  assertOptions(field, value, BACKOFF_KEYS);
  if (value.type !== 'fixed' && value.type !== 'exponential') {
    throw new ValidationError(`${field}.type`, "must be 'fixed', 'exponential' or 'custom'");
  }
  assertInt(`${field}.delayMs`, value.delayMs, { max: MAX_MS });
  const out: Backoff = { type: value.type, delayMs: value.delayMs };
  if (value.maxDelayMs !== undefined) {
    assertInt(`${field}.maxDelayMs`, value.maxDelayMs, { max: MAX_MS });
    out.maxDelayMs = value.maxDelayMs;
  }
  if (value.jitter !== undefined) {
    assertNumber(`${field}.jitter`, value.jitter, 0, 1);
    out.jitter = value.jitter;
  }
  return out;
}

/** What add.lua needs for one job, all checked. */
export interface PreparedJob {
  id: string | undefined;
  meta: RecordMeta;
  priority: number;
  /** '' now, 'l' now at the head (lifo), 'd<ms>' after a delay (Redis clock), 'a<ms>' at an absolute time */
  due: string;
  /** '' when the job has no group */
  group: string;
  /** A deduplication id is in its meta (dd): adds/deduplication.lua reads it. */
  dedup: boolean;
}

export function prepareJob(field: string, opts: unknown, defaults: JobPolicy, now: number): PreparedJob {
  const o = opts ?? {};
  assertOptions(field, o, JOB_OPTION_KEYS);
  if (o.jobId !== undefined) assertNewJobId(o.jobId, `${field}.jobId`);
  if (o.name !== undefined) assertString(`${field}.name`, o.name, 128);
  if (o.priority !== undefined) assertInt(`${field}.priority`, o.priority, { min: -MAX_PRIORITY, max: MAX_PRIORITY });
  if (o.group !== undefined) {
    assertGroupName(o.group, `${field}.group`);
    if (o.priority) throw new ValidationError(field, 'a job with a group cannot have a priority (FIFO within its group)');
  }
  if (o.waitMs !== undefined) assertInt(`${field}.waitMs`, o.waitMs, { max: MAX_TIMER_MS });
  if (o.keepLogs !== undefined) assertInt(`${field}.keepLogs`, o.keepLogs, { min: 1, max: MAX_LOG_LINES });
  if (o.delayMs !== undefined && o.runAt !== undefined) {
    throw new ValidationError(field, 'give delayMs or runAt, not both');
  }
  let due = '';
  if (o.delayMs !== undefined) {
    assertInt(`${field}.delayMs`, o.delayMs, { max: MAX_MS });
    if (o.delayMs > 0) due = `d${o.delayMs}`;
  }
  if (o.runAt !== undefined) {
    const at = o.runAt instanceof Date ? o.runAt.getTime() : o.runAt;
    assertInt(`${field}.runAt`, at, { max: MAX_RUN_AT });
    due = `a${at}`;
  }
  if (o.lifo !== undefined) {
    assertBoolean(`${field}.lifo`, o.lifo);
    if (o.lifo && due !== '') throw new ValidationError(field, 'lifo is for jobs pending now: a delayed job becomes pending in due order');
    if (o.lifo) due = 'l'; // add-jobs.lua: now, at the head
  }
  const policy = { ...defaults, ...checkPolicy(field, o) };
  const meta: RecordMeta = { t: now, a: policy.attempts };
  if (o.name !== undefined) meta.n = o.name;
  if (o.priority) meta.p = o.priority;
  // As a JSON string: Lua re-encodes the meta with 14 significant digits, which a jitter would lose.
  if (!sameBackoff(policy.backoff, DEFAULT_POLICY.backoff)) meta.b = JSON.stringify(policy.backoff);
  if (policy.leaseMs !== undefined) meta.l = policy.leaseMs;
  if (policy.timeoutMs !== undefined) meta.x = policy.timeoutMs;
  if (policy.keepCompletedMs !== DEFAULT_POLICY.keepCompletedMs) meta.k = policy.keepCompletedMs;
  if (policy.keepCompletedCount !== undefined) meta.m = policy.keepCompletedCount;
  if (policy.keepDeadMs !== undefined) meta.da = policy.keepDeadMs;
  if (policy.keepDeadCount !== undefined) meta.dn = policy.keepDeadCount;
  if (o.group !== undefined) meta.g = o.group;
  if (o.keepLogs !== undefined) meta.kl = o.keepLogs;
  const bucket = (o as { [BUCKET]?: number })[BUCKET];
  if (bucket !== undefined) meta.bk = bucket;
  if (o.jobId !== undefined) {
    meta.u = 1;
    if (policy.dedupWindowMs !== DEFAULT_POLICY.dedupWindowMs) meta.i = policy.dedupWindowMs;
  }
  if (o.deduplication !== undefined) checkDeduplication(`${field}.deduplication`, o.deduplication, meta);
  return { id: o.jobId as string | undefined, meta, priority: o.priority ?? 0, due, group: (o.group as string | undefined) ?? '', dedup: meta.dd !== undefined };
}

/** Checks `deduplication` and writes it into `meta` (dd, dm, dt, dk; w's bit DEDUP_ENDS when the job's end releases the id). */
function checkDeduplication(field: string, value: unknown, meta: RecordMeta): void {
  assertOptions(field, value, DEDUPLICATION_KEYS);
  assertJobId(value.id, `${field}.id`);
  if (value.mode !== undefined && !Object.hasOwn(DEDUPLICATION_MODES, value.mode as string)) {
    throw new ValidationError(`${field}.mode`, "must be 'untilEnded', 'throttle' or 'debounce'");
  }
  const mode = (value.mode as DeduplicationMode | undefined) ?? (value.ttlMs === undefined ? 'untilEnded' : 'throttle');
  if (mode === 'throttle') {
    if (value.ttlMs === undefined) throw new ValidationError(`${field}.ttlMs`, 'is required in throttle mode: how long the id is held');
    assertInt(`${field}.ttlMs`, value.ttlMs, { min: 1, max: MAX_MS });
  } else if (value.ttlMs !== undefined) {
    throw new ValidationError(`${field}.ttlMs`, `is for throttle mode only: in ${mode} mode the id is held until its job ends`);
  }
  if (value.keepLastIfActive !== undefined) {
    assertBoolean(`${field}.keepLastIfActive`, value.keepLastIfActive);
    if (value.keepLastIfActive && mode === 'throttle') {
      throw new ValidationError(`${field}.keepLastIfActive`, 'is for untilEnded and debounce modes: a throttle window does not wait for its job');
    }
  }
  meta.dd = value.id;
  meta.dm = DEDUPLICATION_MODES[mode];
  if (mode === 'throttle') meta.dt = value.ttlMs as number;
  else meta.w = DEDUP_ENDS; // flows never carry a deduplication id: w holds nothing else
  if (value.keepLastIfActive) meta.dk = 1;
}

/** Whether backoff `a` is the built-in `b` (a strategy's never is: it is always stored). */
function sameBackoff(a: Backoff | CustomBackoff, b: Backoff | CustomBackoff): boolean {
  if (a.type === 'custom' || b.type === 'custom') return false;
  return a.type === b.type && a.delayMs === b.delayMs && a.maxDelayMs === b.maxDelayMs && a.jitter === b.jitter;
}

/**
 * Records of jobs added without options, which differ only in their time: the meta is
 * prepared and encoded once per policy, and each record is the time spliced into it. The
 * result is exactly `encodeRecord(prepareJob(field, undefined, defaults, now).meta, dataJson)`.
 */
export function plainRecordMaker(defaults: JobPolicy): (now: number, dataJson: string) => string {
  const { t: _t, ...rest } = prepareJob('opts', undefined, defaults, 0).meta;
  const tail = JSON.stringify(rest).slice(1); // '"a":3}' or '}'
  const sep = tail === '}' ? '' : ',';
  return (now, dataJson) => `{"t":${now}${sep}${tail}\n${dataJson}`;
}

