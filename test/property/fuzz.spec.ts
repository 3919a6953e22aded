/**
 * Fuzz test of every public entry point with hostile input, against a private real Redis.
 *
 * For each call the outcome must be EITHER a typed error (an instance of the exported
 * RelqError, ValidationError for bad input; thrown synchronously or as a rejection) with
 * NOTHING written to Redis (every key of the server, its type and value, compared before
 * and after), OR a correct result (e.g. a job id with ':' or '*' is legal: the job must then
 * be readable with getJob, its data and options must round-trip, and it must sit in exactly
 * one state). Never a TypeError, a Redis error, a crash or a half-written job. An oracle
 * written independently of lib/ from the documented limits (README, the types.ts of lib/core's features, the
 * ranges the errors state) says which outcome each input must have.
 *
 * Inputs come from fast-check arbitraries (fc.string with unit 'grapheme' / 'binary',
 * fc.double with NaN, fc.anything, ...) plus tables of hand-picked nasty values.
 *
 * The properties are a table (FUZZ_PROPERTIES): each gives its inputs, its number of runs and
 * a run that checks one call and names its outcome; fuzzProperty runs it on a flushed server
 * and requires every outcome to come up (the tally is logged by the last test).
 *
 * REPLAY. A failure prints fast-check's report (seed and path) and, at its end, the command
 * line that replays it, e.g.
 *
 *   RELQ_FC_SEED=<seed> RELQ_FC_PATH=<path> node --experimental-vm-modules \
 *     node_modules/jest/bin/jest.js --runInBand test/property/fuzz.spec.ts -t '<test name>'
 *
 * (-t keeps the seed and path away from the other properties of this file.)
 * RELQ_FC_RUNS=<n> sets every property's number of runs (each has its own default).
 *
 * `null` for an optional option is taken as "absent" by some options and refused by others;
 * both outcomes are accepted here (see `judge`).
 *
 * Nothing is narrowed: the generators produce every value of their kind, among them sparse
 * arrays and `undefined` inside payloads, toJSON() returning undefined or a BigInt, nesting
 * past 1000 levels, error values with neither JSON nor a prototype, things that are not
 * leases, non-string requeue reasons, non-boolean worker flags, things that are not an open
 * Queue, duplicate id lists for retryDead / purgeDead, invalid ids for waitForResult / watch,
 * and 2^31 - 1 / 2^31 for every option that becomes a Node timer (the oracle: at most
 * 2^31 - 1, and a wait that long really waits). The last describe block pins each of these
 * guarantees with a minimal example.
 *
 * The job-management calls (getJobs, remove, promote, retry, changePriority, clean, drain) get
 * hostile ids, states, pages, options, limits and priorities on a queue with one job in every
 * state (a leased one refused by remove without force, a grouped one by changePriority, an
 * unfinished or unknown one by retry);
 * updateProgress and log get progress values that are not JSON or too large, lines past
 * maxPayloadBytes and non-strings, through current and stale leases; maxLogLines is fuzzed
 * in the constructor and checked for the lines it keeps.
 */
import fc from 'fast-check';
import { assertReplayable } from './replay.js';
import type { Redis } from 'ioredis';
import {
  BatchWorker,
  ClosedError,
  JobLeasedError,
  JobNotRetryableError,
  NotReplicatedError,
  PayloadTooLargeError,
  Queue,
  QueueFullError,
  RelqError,
  ValidationError,
  Worker,
  type JobOptions,
  type Lease,
  type QueueOptions,
} from '../../lib/index.js';
import { lastValueFrom, toArray } from 'rxjs';
import { redisClient, startRedis, type TestRedis } from '../support/redis.js';
import { readCommand } from '../support/key-read.js';
import { registryKey } from '../../lib/core/redis/keys.js';

const RUNS = process.env.RELQ_FC_RUNS !== undefined ? Number(process.env.RELQ_FC_RUNS) : undefined;

const MAX_MS = 2 ** 41;
/** Shortest lease, wherever a leaseMs is given (a job, a queue's defaults, lease(), a lease loop). */
const MIN_LEASE_MS = 10;
/** Longest delay a Node timer takes (setTimeout fires after 1 ms beyond it): the ceiling of every wait option. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const PAYLOAD_LIMIT = 4096;

// ---- the server, the observer, and what every call is compared against -------------------

let server: TestRedis;
let obs: Redis;
/** Queues shared by the properties (closed in afterAll). */
let plain: Queue<unknown, unknown>;
const opened: Array<{ close(): Promise<unknown> }> = [];

beforeAll(async () => {
  server = await startRedis({ controllable: true });
  obs = redisClient(server, { maxRetriesPerRequest: 1 });
  obs.on('error', () => undefined);
  plain = track(new Queue<unknown, unknown>('fuzz', { connection: server.url, prefix: 'fz', maxPayloadBytes: PAYLOAD_LIMIT }));
});

afterAll(async () => {
  for (const o of opened.splice(0).reverse()) await o.close().catch(() => undefined);
  if (obs) await obs.quit().catch(() => obs.disconnect());
  await server?.stop();
});

/** How many inputs of each outcome every property saw (logged by the last test). */
const tally: Record<string, Record<string, number>> = {};
function note(counts: Record<string, number>): void {
  tally[expect.getState().currentTestName ?? '?'] = { ...counts };
}

function track<T extends { close(): Promise<unknown> }>(o: T): T {
  opened.push(o);
  return o;
}

interface KeyValue {
  type: string;
  value: unknown;
  /** the key expires (its exact TTL changes by itself, so only its presence is compared) */
  expires: boolean;
}

/** Every key of the server with its type, full value and whether it expires. */
async function snapshotAll(): Promise<Record<string, KeyValue>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await obs.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  keys.sort();
  const meta = (await obs.pipeline(keys.flatMap((k) => [['type', k], ['pttl', k]])).exec())!;
  const types = keys.map((_, i) => String(meta[2 * i]![1]));
  const reads = keys.map((k, i) => readCommand(types[i]!, k));
  const values = (await obs.pipeline(reads).exec())!;
  const out: Record<string, KeyValue> = {};
  keys.forEach((k, i) => {
    if (types[i] === 'none' || Number(meta[2 * i + 1]![1]) === -2) return; // expired meanwhile
    let value = values[i]![1];
    if (types[i] === 'set') value = [...(value as string[])].sort();
    out[k] = { type: types[i]!, value, expires: Number(meta[2 * i + 1]![1]) >= 0 };
  });
  return out;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Runs `fn`, catching a synchronous throw as well as a rejection. */
async function outcome<T>(fn: () => T | Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}(${(e as { code?: string }).code ?? ''}): ${e.message.slice(0, 300)}` : String(e);
}

/**
 * `out` must be a typed rejection (ValidationError unless `kind` says otherwise) and nothing
 * may have changed. `field`: the ValidationError's field must be it (a string), or pass it.
 * Resolves to the outcome a property counts.
 */
async function expectRefused(
  out: Outcome<unknown>,
  before: Record<string, KeyValue>,
  what: string,
  kind: new (...args: any[]) => RelqError = ValidationError,
  field?: string | ((f: string) => boolean),
): Promise<'refused'> {
  if (out.ok) throw new Error(`${what}: expected ${kind.name}, got a result: ${safeShow(out.value)}`);
  if (!(out.error instanceof kind)) throw new Error(`${what}: expected ${kind.name}, got ${describeError(out.error)}`);
  expect(out.error).toBeInstanceOf(RelqError);
  if (field !== undefined) {
    const f = out.error instanceof ValidationError ? out.error.field : `(a ${out.error.constructor.name}, no field)`;
    if (typeof field === 'string' ? f !== field : !field(f)) throw new Error(`${what}: refused as expected, but naming the field ${JSON.stringify(f)}: ${describeError(out.error)}`);
  }
  const after = await snapshotAll();
  try {
    expect(after).toEqual(before);
  } catch (err) {
    throw new Error(`${what}: refused with ${describeError(out.error)} but Redis changed:\n${(err as Error).message}`);
  }
  return 'refused';
}

/** A field predicate: `root` itself or a path below it (`root.key`, `root[0]`). */
const under =
  (root: string) =>
  (f: string): boolean =>
    f === root || f.startsWith(`${root}.`) || f.startsWith(`${root}[`);

/** `out` must be a result; returns it. */
function expectOk<T>(out: Outcome<T>, what: string): T {
  if (!out.ok) throw new Error(`${what}: expected a result, got ${describeError(out.error)}`);
  return out.value;
}

function safeShow(v: unknown): string {
  try {
    return fc.stringify(v).slice(0, 300);
  } catch {
    try {
      return String(v).slice(0, 300);
    } catch {
      return '<a value neither fast-check nor String() can print>';
    }
  }
}

/** Raw invariants of one queue: every record in exactly one state, every id in a state has a record. */
async function checkStructure(q: Queue<any, any>, what: string): Promise<void> {
  const k = q.keys.byName;
  const [jobs, pending, prio, delayed, working, leases, done, dead] = (await obs
    .pipeline([
      ['hkeys', k.jobs],
      ['lrange', k.pending, '0', '-1'],
      ['zrange', k.prio, '0', '-1'],
      ['zrange', k.delayed, '0', '-1'],
      ['zrange', k.working, '0', '-1'],
      ['hkeys', k.leases],
      ['zrange', k.done, '0', '-1'],
      ['zrange', k.dead, '0', '-1'],
    ])
    .exec())!.map(([err, v]) => {
    if (err) throw err;
    return v as string[];
  });
  const groupLists: string[] = [];
  let cursor = '0';
  const pattern = `${q.keys.tag.replace(/[*?[\]\\{}]/g, (c) => `\\${c}`)}:g:*`;
  do {
    const [next, batch] = await obs.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    groupLists.push(...batch);
  } while (cursor !== '0');
  const where = new Map<string, string>();
  const place = (ids: string[], s: string) => {
    for (const id of ids) {
      if (where.has(id)) throw new Error(`${what}: job ${JSON.stringify(id)} is in ${where.get(id)} and in ${s} (half-written or duplicated)`);
      where.set(id, s);
    }
  };
  place(pending!, 'pending');
  place(prio!, 'prio');
  place(delayed!, 'delayed');
  place(working!, 'working');
  place(done!, 'done');
  place(dead!, 'dead');
  for (const g of groupLists) place(await obs.lrange(g, 0, -1), g);
  expect([...leases!].sort()).toEqual([...working!].sort());
  for (const id of where.keys()) if (!jobs!.includes(id)) throw new Error(`${what}: job ${JSON.stringify(id)} is in ${where.get(id)} without a record`);
  for (const id of jobs!) if (!where.has(id)) throw new Error(`${what}: job ${JSON.stringify(id)} has a record but no state (half-written)`);
}

/** fc.assert with replay from the environment and the replay command in the failure message. */
function property<Ts extends [unknown, ...unknown[]]>(prop: fc.IAsyncPropertyWithHooks<Ts>, numRuns: number): Promise<void> {
  const name = expect.getState().currentTestName ?? '';
  return assertReplayable(
    prop,
    RUNS ?? numRuns,
    () => ` node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand test/property/fuzz.spec.ts -t '${name.replace(/'/g, "'\\''")}'`,
  );
}

/**
 * One property of the table: the inputs of a run and the run itself, which checks one call on a
 * server flushed before it and says which outcome(s) the call had.
 */
interface FuzzProperty<Ts extends [unknown, ...unknown[]], O extends string> {
  /** How many runs (RELQ_FC_RUNS overrides it). */
  runs: number;
  inputs: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> };
  /** Every outcome a run may have, counted and logged by the last test. */
  outcomes: readonly O[];
  /** What the runs must have seen: each outcome, or one of a group, at least once (default: every outcome). */
  mustSee?: ReadonlyArray<O | readonly O[]>;
  run(...input: Ts): Promise<NoInfer<O> | readonly NoInfer<O>[]>;
}

/** The check of a property, made when its test starts (the server is up by then). */
function fuzzProperty<Ts extends [unknown, ...unknown[]], O extends string>(make: () => FuzzProperty<Ts, O> | Promise<FuzzProperty<Ts, O>>): () => Promise<void> {
  return async () => {
    const p = await make();
    const counts = Object.fromEntries(p.outcomes.map((o) => [o, 0])) as Record<O, number>;
    await property(
      fc.asyncProperty(...p.inputs, async (...input: Ts) => {
        await reset();
        for (const o of [await p.run(...input)].flat() as O[]) counts[o] += 1;
      }),
      p.runs,
    );
    note(counts);
    for (const group of p.mustSee ?? p.outcomes) {
      const names = [group].flat() as O[];
      expect([names.join(' or '), names.some((o) => counts[o] > 0)]).toEqual([names.join(' or '), true]);
    }
  };
}

// ---- the oracle: the documented limits, written independently of lib/ ---------------------

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}
const isText = (s: unknown, max: number, min = 0): s is string =>
  typeof s === 'string' && s.length >= min && s.length <= max && !CONTROL.test(s) && wellFormed(s);
/** A name with no brace: a prefix's, a group's (and a queue's without a tag). */
const braceless = (s: unknown): s is string => isText(s, 128, 1) && !/[{}]/.test(s);
/** A queue's name may hold one non-empty `{tag}`, which picks its keys' slot (docs/flows.md). */
const validQueueName = (s: unknown): s is string => isText(s, 128, 1) && /^[^{}]*(\{[^{}]+\}[^{}]*)?$/.test(s);
const validPrefix = (s: unknown): s is string => braceless(s) && !s.includes(':') && !/[*?[\]\\]/.test(s);
const validJobId = (s: unknown): s is string => isText(s, 256, 1);
/** An id a new job may be given: '.' and '..' are read and managed, never given (URLs drop them as dot segments). */
const validNewJobId = (s: unknown): s is string => validJobId(s) && s !== '.' && s !== '..';
const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isOptionsObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (o: Record<string, unknown>, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));
/** `v` is absent or passes `ok`. */
const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);

function validBackoff(b: unknown): boolean {
  if (typeof b === 'number') return isInt(b, 0, MAX_MS);
  if (!isOptionsObject(b) || !onlyKeys(b, ['type', 'delayMs', 'maxDelayMs', 'jitter'])) return false;
  return (
    (b.type === 'fixed' || b.type === 'exponential') &&
    isInt(b.delayMs, 0, MAX_MS) &&
    opt(b.maxDelayMs, (x) => isInt(x, 0, MAX_MS)) &&
    opt(b.jitter, (x) => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1)
  );
}

const POLICY_KEYS = ['attempts', 'backoff', 'leaseMs', 'timeoutMs', 'keepCompletedMs', 'dedupWindowMs'] as const;
function validPolicy(o: Record<string, unknown>): boolean {
  return (
    opt(o.attempts, (x) => isInt(x, 1, 1_000_000)) &&
    opt(o.backoff, validBackoff) &&
    opt(o.leaseMs, (x) => isInt(x, MIN_LEASE_MS, MAX_MS)) &&
    opt(o.timeoutMs, (x) => isInt(x, 1, MAX_TIMER_MS)) &&
    opt(o.keepCompletedMs, (x) => isInt(x, 0, MAX_MS)) &&
    opt(o.dedupWindowMs, (x) => isInt(x, 0, MAX_MS))
  );
}

const JOB_KEYS = ['jobId', 'name', 'delayMs', 'runAt', 'priority', 'group', 'waitMs', ...POLICY_KEYS] as const;
/** `call`: a job's own waitMs (how long an add waits for room) is add()'s alone. */
function validJobOptions(o: unknown, call: 'add' | 'addBulk' | 'tryAdd' | 'tryAddBulk' = 'add'): boolean {
  if (o === undefined || o === null) return true; // no options
  if (!isOptionsObject(o) || !onlyKeys(o, JOB_KEYS)) return false;
  if (call !== 'add' && o.waitMs !== undefined) return false;
  const runAt = o.runAt instanceof Date ? o.runAt.getTime() : o.runAt;
  return (
    opt(o.jobId, validNewJobId) &&
    opt(o.name, (x) => isText(x, 128)) &&
    opt(o.priority, (x) => isInt(x, -1000, 1000)) &&
    opt(o.group, braceless) &&
    !(o.group !== undefined && o.priority) &&
    opt(o.waitMs, (x) => isInt(x, 0, MAX_TIMER_MS)) &&
    !(o.delayMs !== undefined && o.runAt !== undefined) &&
    opt(o.delayMs, (x) => isInt(x, 0, MAX_MS)) &&
    opt(runAt, (x) => isInt(x, 0, 2 ** 51)) &&
    validPolicy(o)
  );
}

const QUEUE_KEYS = [
  'connection', 'prefix', 'defaults', 'maxPayloadBytes', 'maxLogLines', 'events', 'evictionCheck', 'onWarning', 'durability',
  'bound', 'stats', 'groupConcurrency', 'exclusive', 'checkClosed',
] as const;
/** The commandTimeout of relq's own connections (a durability wait must stay below it). */
const COMMAND_TIMEOUT_MS = 5000;
function validQueueOptions(o: unknown): boolean {
  if (!isOptionsObject(o) || !onlyKeys(o, QUEUE_KEYS)) return false;
  const ex = o.exclusive;
  const exOk =
    ex === undefined ||
    (isOptionsObject(ex) &&
      onlyKeys(ex, ['producer', 'consumer', 'waitMs', 'ttlMs']) &&
      opt(ex.producer, isBool) &&
      opt(ex.consumer, isBool) &&
      opt(ex.waitMs, (x) => isInt(x, 0, MAX_TIMER_MS)) &&
      opt(ex.ttlMs, (x) => isInt(x, 30, MAX_TIMER_MS)));
  const contradiction = o.checkClosed === false && (Boolean(o.bound) || o.stats === true || (isOptionsObject(ex) && Boolean(ex.producer)));
  const du = o.durability;
  const durabilityOk =
    du === undefined ||
    (isOptionsObject(du) && onlyKeys(du, ['replicas', 'timeoutMs']) && isInt(du.replicas, 1, 1000) && isInt(du.timeoutMs, 1, Math.min(60_000, COMMAND_TIMEOUT_MS - 1)));
  const conn = o.connection;
  const connectionOk =
    conn === undefined ||
    (typeof conn === 'string' && /^rediss?:\/\//i.test(conn)) ||
    (isOptionsObject(conn) && (conn.url === undefined || (typeof conn.url === 'string' && /^rediss?:\/\//i.test(conn.url))));
  return (
    connectionOk &&
    durabilityOk &&
    opt(o.evictionCheck, (x) => x === 'warn' || x === 'error' || x === 'off') &&
    opt(o.onWarning, (x) => typeof x === 'function') &&
    opt(o.prefix, validPrefix) &&
    opt(o.defaults, (d) => isOptionsObject(d) && onlyKeys(d, POLICY_KEYS) && validPolicy(d)) &&
    opt(o.maxPayloadBytes, (x) => isInt(x, 1, 512 * 1024 * 1024)) &&
    opt(o.maxLogLines, (x) => isInt(x, 1, 100_000)) &&
    opt(o.events, isBool) &&
    opt(o.bound, (x) => isInt(x, 0, 2 ** 40)) &&
    opt(o.stats, isBool) &&
    opt(o.groupConcurrency, (x) => isInt(x, 0, 2 ** 31)) && // a count, not a timer
    opt(o.checkClosed, isBool) &&
    exOk &&
    !contradiction
  );
}

/**
 * `null` for an optional option: some options take it as absent (their default applies),
 * others refuse it. Either outcome is accepted here. `loose(o)` is `o` with its null options
 * left out (except `keep`); `judge` says whether `o` must be accepted, must be refused, or
 * may be either (then a result is checked as if the null options were absent).
 */
type Verdict = 'valid' | 'invalid' | 'either';
function loose<T>(o: T, keep: readonly string[] = []): T {
  if (!isOptionsObject(o)) return o;
  const copy: Record<string, unknown> = { ...o }; // keeps an own `__proto__` key own
  for (const k of Object.keys(copy)) if (copy[k] === null && !keep.includes(k)) delete copy[k];
  return copy as T;
}
function judge(o: unknown, valid: (x: any) => boolean, keep: readonly string[] = []): Verdict {
  if (valid(o)) return 'valid';
  return isOptionsObject(o) && valid(loose(o, keep)) ? 'either' : 'invalid';
}
/** Whether `out` must be checked as a refusal. */
const mustRefuse = (verdict: Verdict, ok: boolean): boolean => verdict === 'invalid' || (verdict === 'either' && !ok);

/**
 * A plain object's prototype: null, or Object.prototype of any realm (Jest runs tests in a vm
 * context: objects made by Node itself, e.g. Buffer#toJSON's, have the outer realm's).
 */
function plainProto(p: unknown): boolean {
  if (p === null) return true;
  const ctor = (p as { constructor?: unknown }).constructor;
  return Object.getPrototypeOf(p) === null && typeof ctor === 'function' && ctor.name === 'Object';
}

/** Most levels of nesting a payload may have (the top-level object or array is level 1). */
const MAX_DEPTH = 1000;

/**
 * The JSON text a payload must be stored as, or undefined when it must be refused.
 *
 * Accepted: plain objects (prototype Object or null) and arrays of strings, booleans, finite
 * numbers, null and such objects / arrays, at most MAX_DEPTH levels deep. `undefined` follows
 * JSON.stringify: an object field holding it is left out, an array item holding it (or a
 * hole of a sparse array) becomes null; alone it has no JSON and is refused. An object with a
 * toJSON() method is replaced by what it returns, as JSON.stringify does (so a toJSON() giving
 * undefined leaves the key out / becomes null inside, and is refused alone); a toJSON() that
 * throws or gives a BigInt is refused. Refused too: functions, symbols, BigInt, NaN, Infinity,
 * cycles, Maps, Sets and other class instances without toJSON. So whatever is accepted is
 * stored as JSON.stringify(value), and reads back as JSON.parse of that.
 */
function payloadJson(value: unknown): string | undefined {
  const seen = new Set<object>();
  const ok = (v: unknown, depth: number, inside: boolean): boolean => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return true;
      case 'number':
        return Number.isFinite(v);
      case 'undefined':
        return inside;
      case 'object':
        break;
      default:
        return false;
    }
    if (v === null) return true;
    if (depth >= MAX_DEPTH) return false;
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return true; // JSON.stringify's business (below)
    if (seen.has(v)) return false;
    seen.add(v);
    let good = true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && good; i++) good = ok(v[i], depth + 1, true); // a hole reads as undefined
    } else {
      good = plainProto(Object.getPrototypeOf(v)) && Object.keys(v).every((k) => ok((v as Record<string, unknown>)[k], depth + 1, true));
    }
    seen.delete(v);
    return good;
  };
  if (!ok(value, 0, false)) return undefined;
  try {
    return JSON.stringify(value); // undefined: a toJSON() at the top gave undefined
  } catch {
    return undefined; // a toJSON() threw or gave a BigInt
  }
}

// ---- hostile values ---------------------------------------------------------------------------

const NASTY_STRINGS: string[] = [
  '', ' ', '  ', 'a b', '{', '}', '{}', '{a}', 'a{b', '}a{', ':', '::', 'a:b', '*', '?', '[', ']', '[a-z]', '\\', 'a\\*',
  '\u0000', 'a\u0000b', '\n', 'a\nb', '\r\n', '\t', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f', '\u00a0',
  '\ud800', '\udfff', 'a\ud800', '\udc00a', '\udc00\ud800', '\ud83d', '😀', '👨‍👩‍👧‍👦', '🦄:*', 'é', 'e\u0301', 'ñ',
  '\u200b', '\u2028', '\u2029', '\ufeff', '\ufffd', '\uffff', '日本語', 'مرحبا', '"', "'", '`', '%s', '${x}', '<script>',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', '-1', '0', '1e999',
  '{relq:x}:jobs', 'x'.repeat(127), 'x'.repeat(128), 'x'.repeat(129), 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(257),
  '😀'.repeat(64), '😀'.repeat(65), '😀'.repeat(128), '😀'.repeat(129), 'x'.repeat(100_000),
];
const SPECIAL_CHARS = ['{', '}', ':', '*', ' ', '\u0000', '\n', '\ud800', '\udc00', '😀', 'é', '\u007f', '\u0085', '?', '[', '\\'];

const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }),
  fc.array(fc.oneof(fc.constantFrom(...SPECIAL_CHARS), fc.string({ minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 8 }).map((p) => p.join('')),
  fc.string({ unit: 'grapheme', minLength: 100, maxLength: 300 }),
);

const NASTY_NUMBERS = [
  NaN, Infinity, -Infinity, -0, 0, 1, -1, 0.5, -0.5, 1.5, 1e-300, 5e-324, 9, 10, 29, 30, 31, 128, 129, 999, 1000, 1001, -999,
  -1000, -1001, 10_000, 10_001, 100_000, 100_001, 1_000_000, 1_000_001, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 40, 2 ** 40 + 1,
  MAX_MS - 1, MAX_MS, MAX_MS + 1, 2 ** 51, 2 ** 51 + 1, 2 ** 53, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE, -Number.MAX_VALUE, 512 * 1024 * 1024, 512 * 1024 * 1024 + 1,
];
const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  fc.double(),
  fc.integer(),
  fc.integer({ min: -5, max: 2000 }),
);

const WRONG_TYPES: unknown[] = ['1', '', 'abc', true, false, null, [], [1], {}, () => 1, Symbol('s'), 1n, new Date(0), new Number(1), new String('1')];
const wrongType: fc.Arbitrary<unknown> = fc.constantFrom(...WRONG_TYPES);

/** A value for a numeric option: numbers of every kind, wrong types, or absent. */
const numberish: fc.Arbitrary<unknown> = fc.oneof({ weight: 4, arbitrary: nastyNumber }, { weight: 1, arbitrary: wrongType }, { weight: 1, arbitrary: fc.constant(undefined) });
const stringish: fc.Arbitrary<unknown> = fc.oneof({ weight: 4, arbitrary: nastyString }, { weight: 1, arbitrary: wrongType }, { weight: 1, arbitrary: fc.constant(undefined) });
const boolish: fc.Arbitrary<unknown> = fc.oneof({ weight: 3, arbitrary: fc.boolean() }, { weight: 1, arbitrary: wrongType }, { weight: 1, arbitrary: fc.constant(undefined) });

const UNKNOWN_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'foo', 'jobID', 'delay', 'Priority', ''];
/**
 * Builds an options object: `known` keys assigned normally (undefined values left out or
 * kept as own undefined keys), plus maybe an unknown key created through JSON.parse, so that
 * `__proto__` is an own key and not the prototype.
 */
function optionsObject(known: Record<string, unknown>, extraKey: string | undefined, extraValue: unknown, keepUndefined: boolean): Record<string, unknown> {
  const o: Record<string, unknown> =
    extraKey === undefined ? {} : (JSON.parse(`{${JSON.stringify(extraKey)}: ${JSON.stringify(extraValue) ?? 'null'}}`) as Record<string, unknown>);
  for (const [k, v] of Object.entries(known)) if (v !== undefined || keepUndefined) o[k] = v;
  return o;
}
const extraKeyArb = fc.option(fc.constantFrom(...UNKNOWN_KEYS), { freq: 4, nil: undefined });
const extraValueArb = fc.oneof(fc.constant(1), fc.constant({ jobId: 'evil', prefix: 'x:y', attempts: 0 }), fc.constant(null), fc.string({ maxLength: 4 }));

/** One option: its valid values and its hostile ones. */
interface Field {
  valid: fc.Arbitrary<unknown>;
  hostile: fc.Arbitrary<unknown>;
}
function field(valid: fc.Arbitrary<unknown>, hostile: fc.Arbitrary<unknown>): Field {
  return { valid, hostile };
}

/**
 * An options object built from its fields (an undefined value: key left out, or kept as an
 * own undefined key): a third of them with valid values only, the others with each field
 * absent, valid or hostile, and maybe an unknown key (`__proto__` as an own key included).
 */
function optionsArb(fields: Record<string, Field | fc.Arbitrary<unknown>>, only?: 'valid'): fc.Arbitrary<Record<string, unknown>> {
  const pick = (mode: 'valid' | 'mixed') =>
    fc.record(
      Object.fromEntries(
        Object.entries(fields).map(([k, f]): [string, fc.Arbitrary<unknown>] => {
          if (!('valid' in f)) return [k, f];
          if (mode === 'valid') return [k, fc.option(f.valid, { nil: undefined, freq: 2 })];
          return [k, fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: f.valid }, { weight: 2, arbitrary: f.hostile })];
        }),
      ),
    );
  const validOnly = fc.tuple(pick('valid'), fc.boolean()).map(([known, keepUndefined]) => optionsObject(known, undefined, undefined, keepUndefined));
  if (only === 'valid') return validOnly;
  const mixed = fc
    .tuple(pick('mixed'), extraKeyArb, extraValueArb, fc.boolean())
    .map(([known, k, v, keepUndefined]) => optionsObject(known, k, v, keepUndefined));
  return fc.oneof({ weight: 1, arbitrary: validOnly }, { weight: 2, arbitrary: mixed });
}
/** A nested options object as one option: valid ones only on the valid side. */
function nested(fields: Record<string, Field | fc.Arbitrary<unknown>>): Field {
  return field(optionsArb(fields, 'valid'), fc.oneof(optionsArb(fields), wrongType));
}
const intIn = (min: number, max: number): fc.Arbitrary<number> =>
  fc.oneof(fc.constantFrom(min, max), fc.integer({ min, max: Math.min(max, min + 10_000) }), fc.double({ min, max, noNaN: true }).map(Math.floor));
/**
 * A timer-backed wait (ms): valid ones from `min` to 2^31 - 1 (both ends often), hostile numbers
 * (2^31 - 1, 2^31 and 2^31 + 1 among them).
 */
const timerField = (min: number): Field =>
  field(fc.oneof({ weight: 3, arbitrary: intIn(min, MAX_TIMER_MS) }, { weight: 1, arbitrary: fc.constantFrom(MAX_TIMER_MS, MAX_TIMER_MS - 1) }), numberish);

/** Payload-ish values: JSON of every kind, non-JSON values, and a table of nasty ones. */
function cyclicObject(): unknown {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}
function cyclicArray(): unknown {
  const a: unknown[] = [1];
  a.push([a]);
  return a;
}
/** `n` levels of nesting: objects { d } and arrays alternating. */
function deep(n: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { d: v };
  return v;
}
/** `n` levels of arrays. */
function deepArray(n: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}
/**
 * `v` printed by fast-check (reports, safeShow) as `label`, not walked level by level (a
 * symbol key: neither JSON nor relq sees it).
 */
function labelled<T extends object>(v: T, label: string): T {
  return Object.assign(v, { [fc.toStringMethod]: () => label });
}
/**
 * Values JSON.stringify throws on that have no prototype either (so String() throws too), and
 * one whose toString throws: an error text must still be made of them.
 */
function unprintables(): unknown[] {
  const cyclic = Object.create(null) as Record<string, unknown>;
  cyclic.self = cyclic;
  const big = Object.assign(Object.create(null) as object, { n: 0n });
  const badToString = { n: 1n, toString: () => { throw new Error('no text'); } };
  return [cyclic, big, badToString];
}
/** Nested toJSON() results: JSON.stringify leaves a key out, or makes an array item null. */
const toJsonUndefined = () => ({ toJSON: () => undefined });
const NASTY_PAYLOADS: Array<() => unknown> = [
  () => undefined,
  () => null,
  () => 0,
  () => -0,
  () => '',
  () => 'x'.repeat(PAYLOAD_LIMIT),
  () => '😀'.repeat(PAYLOAD_LIMIT / 4),
  () => 'a\ud800b',
  () => ({ '\ud800': '\udc00' }),
  () => NaN,
  () => Infinity,
  () => ({ a: NaN }),
  () => [1, -Infinity],
  () => 1n,
  () => ({ big: 2n }),
  () => () => 1,
  () => ({ f() {} }),
  () => Symbol('s'),
  () => [Symbol('s')],
  () => ({ u: undefined }),
  () => [undefined],
  () => ({ u: undefined, v: [undefined, 1], w: { x: undefined } }),
  // eslint-disable-next-line no-sparse-arrays
  () => [1, , 3],
  () => new Array(3),
  () => ({ holes: Object.assign(new Array(4), { 1: 'one' }) }),
  () => ({ a: toJsonUndefined(), b: 1 }),
  () => [toJsonUndefined(), 2],
  () => toJsonUndefined(),
  () => ({ toJSON: () => 1n }),
  () => ({ a: [{ toJSON: () => 2n }] }),
  () => ({ toJSON: () => { throw new Error('no JSON'); } }),
  () => ({ toJSON: (key: string) => ({ key }) }),
  () => ({ f: undefined, g: () => 1 }),
  () => [undefined, Symbol('s')],
  ...unprintables().map((v) => () => v),
  () => cyclicObject(),
  () => cyclicArray(),
  () => new Map([[1, 2]]),
  () => new Set([1]),
  () => new Uint8Array([1, 2]),
  () => new Error('e'),
  () => new Number(1),
  () => new String('s'),
  () => new Date(0),
  () => ({ at: new Date(1) }),
  () => Buffer.from('hi'),
  () => ({ toJSON: () => ({ ok: 1 }) }),
  () => JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}}'),
  () => JSON.parse('{"__proto__": null}'),
  () => Object.assign(Object.create(null) as object, { a: 1 }),
  () => Object.create({ inherited: 1 }),
  () => ({ [Symbol('k')]: 1, a: 1 }),
  () => deep(20),
  () => deep(40),
  () => deep(200),
  () => deep(MAX_DEPTH - 1),
  () => deep(MAX_DEPTH),
  () => deep(MAX_DEPTH + 1),
  () => deepArray(MAX_DEPTH),
  () => deepArray(MAX_DEPTH + 1),
  () => ({ a: deepArray(MAX_DEPTH - 1) }),
  () => ({ a: deepArray(MAX_DEPTH) }),
  () => labelled(deep(100_000) as object, 'deep(100_000)'),
  () => labelled(deepArray(100_000) as object, 'deepArray(100_000)'),
  () => Array.from({ length: 500 }, (_, i) => i),
  () => ({ 'a.b': { '[0]': { '': 1 } } }),
];
const nastyPayload = fc.integer({ min: 0, max: NASTY_PAYLOADS.length - 1 }).map((i) => NASTY_PAYLOADS[i]!());
const payloadArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: nastyPayload },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 3,
    arbitrary: fc.anything({
      maxDepth: 3,
      maxKeys: 4,
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withTypedArray: true,
      withSparseArray: true,
      key: fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', 'constructor', 'toString', '')),
    }),
  },
  { weight: 1, arbitrary: fc.double().map((d) => ({ d })) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

/** Hostile job options: each known key valid, out of range or of a wrong type; maybe an unknown key. */
const jobIdish = fc.oneof({ weight: 4, arbitrary: nastyString }, { weight: 1, arbitrary: wrongType }, { weight: 2, arbitrary: fc.constant(undefined) });
const validJobIdArb = fc.oneof({ weight: 6, arbitrary: nastyString.filter(validNewJobId) }, { weight: 1, arbitrary: fc.constant('held') });
const backoffish: fc.Arbitrary<unknown> = fc.oneof(
  numberish,
  optionsArb({
    type: fc.oneof(fc.constantFrom('fixed', 'exponential', 'linear', 'FIXED', ''), wrongType),
    delayMs: numberish,
    maxDelayMs: numberish,
    jitter: fc.oneof(fc.double({ min: -0.5, max: 1.5 }), numberish),
  }),
);
const runAtish: fc.Arbitrary<unknown> = fc.oneof(numberish, nastyNumber.map((n) => new Date(n)), fc.constant(new Date(Date.now() + 3_600_000)));
const validBackoffArb: fc.Arbitrary<unknown> = fc.oneof(
  intIn(0, MAX_MS),
  fc.record(
    { type: fc.constantFrom('fixed', 'exponential'), delayMs: intIn(0, MAX_MS), maxDelayMs: intIn(0, MAX_MS), jitter: fc.double({ min: 0, max: 1, noNaN: true }) },
    { requiredKeys: ['type', 'delayMs'] },
  ),
);
const jobOptionsArb: fc.Arbitrary<Record<string, unknown>> = optionsArb({
  jobId: field(validJobIdArb, jobIdish),
  name: field(nastyString.filter((x) => isText(x, 128)), stringish),
  delayMs: field(intIn(0, MAX_MS), numberish),
  runAt: field(fc.oneof(intIn(0, 2 ** 51), fc.constant(new Date(Date.now() + 3_600_000))), runAtish),
  priority: field(intIn(-1000, 1000), numberish),
  attempts: field(intIn(1, 1_000_000), numberish),
  backoff: field(validBackoffArb, backoffish),
  leaseMs: field(intIn(MIN_LEASE_MS, MAX_MS), numberish),
  keepCompletedMs: field(intIn(0, MAX_MS), numberish),
  dedupWindowMs: field(intIn(0, MAX_MS), numberish),
  group: field(nastyString.filter(braceless), stringish),
  waitMs: timerField(0),
  timeoutMs: timerField(1),
});
/** Job options, or something that is not an options object at all. */
const jobOptionsOrJunk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: jobOptionsArb },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: wrongType },
);

/** Longest error text kept (longer ones are cut there and end with '…'). */
const MAX_ERROR_TEXT = 4096;
/**
 * The lastError an error value leaves: an Error its name and message (only checked to be a
 * string here); any other value its JSON, or String() where it has none, or
 * Object.prototype.toString where String() throws too. Cut to MAX_ERROR_TEXT; read back as
 * Redis keeps it (UTF-8: a lone surrogate becomes U+FFFD).
 */
function errorText(v: unknown): unknown {
  if (v instanceof Error) return expect.any(String);
  let text: string;
  if (typeof v === 'string') text = v;
  else {
    let json: string | undefined;
    try {
      json = JSON.stringify(v);
    } catch {
      json = undefined;
    }
    if (json !== undefined) text = json;
    else {
      try {
        text = String(v);
      } catch {
        text = Object.prototype.toString.call(v);
      }
    }
  }
  if (text.length > MAX_ERROR_TEXT) text = `${text.slice(0, MAX_ERROR_TEXT)}…`;
  return Buffer.from(text, 'utf8').toString('utf8');
}

// ---- setup helpers ------------------------------------------------------------------------------

async function reset(): Promise<void> {
  await obs.flushall();
}

/** A job leased with a long lease on the plain queue (the state is otherwise empty). */
async function leasedJob(opts: JobOptions = {}): Promise<Lease<unknown>> {
  await plain.add({ n: 1 }, opts);
  const [lease] = await plain.lease({ leaseMs: 600_000 });
  if (!lease) throw new Error('setup: nothing leased');
  return lease;
}

async function redisNow(): Promise<number> {
  const [s, us] = await obs.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** After a successful add: the job reads back with its data and options, in exactly one state. */
async function verifyAdded(q: Queue<any, any>, id: string, data: unknown, o: Record<string, unknown> | undefined, created: boolean, what: string): Promise<void> {
  const info = await q.getJob(id);
  if (!info) throw new Error(`${what}: job ${JSON.stringify(id)} was added but getJob finds nothing`);
  if (!created) return; // a duplicate of an earlier job of the same call
  expect(JSON.stringify(info.data)).toBe(payloadJson(data));
  const opts = o ?? {};
  const runAt = opts.runAt instanceof Date ? opts.runAt.getTime() : opts.runAt;
  expect({
    name: info.name,
    priority: info.priority,
    maxAttempts: info.maxAttempts,
    state: info.state,
    group: info.group,
    failures: info.failures,
  }).toEqual({
    name: opts.name ?? '',
    priority: (opts.priority as number | undefined) || 0,
    maxAttempts: opts.attempts ?? 3,
    state: (typeof opts.delayMs === 'number' && opts.delayMs > 0) || runAt !== undefined ? 'delayed' : 'pending',
    group: opts.group,
    failures: 0,
  });
  if (typeof runAt === 'number') expect(info.runAt).toBe(n0(runAt));
}

/** -0 is stored (as JSON) as 0. */
const n0 = (x: unknown): unknown => (x === 0 ? 0 : x);

// ---- properties ----------------------------------------------------------------------------------

const PROPERTIES = 'fuzz: every outcome is a typed error with nothing written, or a correct result';
const FUZZ_PROPERTIES: ReadonlyArray<readonly [title: string, check: () => Promise<void>]> = [
  [
    'Queue constructor: names, prefixes and options objects',
    fuzzProperty(() => {
      const queueOptions = optionsArb({
        prefix: field(nastyString.filter(validPrefix), stringish),
        defaults: nested(
          { attempts: field(intIn(1, 1_000_000), numberish), backoff: field(validBackoffArb, backoffish), leaseMs: field(intIn(MIN_LEASE_MS, MAX_MS), numberish), keepCompletedMs: field(intIn(0, MAX_MS), numberish), dedupWindowMs: field(intIn(0, MAX_MS), numberish) },
        ),
        maxPayloadBytes: field(intIn(1, 512 * 1024 * 1024), numberish),
        maxLogLines: field(intIn(1, 100_000), numberish),
        events: field(fc.boolean(), boolish),
        bound: field(intIn(0, 2 ** 40), numberish),
        stats: field(fc.boolean(), boolish),
        groupConcurrency: field(intIn(0, 2 ** 31), numberish),
        checkClosed: field(fc.boolean(), boolish),
        exclusive: nested({ producer: field(fc.boolean(), boolish), consumer: field(fc.boolean(), boolish), waitMs: timerField(0), ttlMs: timerField(30) }),
        evictionCheck: field(fc.constantFrom('warn', 'error', 'off'), fc.oneof(fc.constantFrom('WARN', 'none', ''), wrongType)),
        onWarning: field(fc.constant(() => undefined), wrongType),
        // no replica here: a valid durability makes every add fail with NotReplicatedError after timeoutMs
        durability: field(
          fc.record({ replicas: intIn(1, 1000), timeoutMs: intIn(1, 20) }),
          fc.oneof(optionsArb({ replicas: field(intIn(1, 1000), numberish), timeoutMs: field(intIn(1, 20), numberish) }), wrongType, fc.constant({ replicas: 1, timeoutMs: COMMAND_TIMEOUT_MS }), fc.constant({ replicas: 0, timeoutMs: 10 })),
        ),
      });
      const connectionArb = fc.oneof(
        { weight: 12, arbitrary: fc.constant('url') },
        { weight: 2, arbitrary: fc.constant('options-url') },
        { weight: 3, arbitrary: fc.constantFrom<unknown>(null, 5, true, () => 1, [], 'http://127.0.0.1:1', '127.0.0.1:6379', { url: 5 }, { url: 'tcp://x' }) },
      );
      return {
        runs: 250,
        outcomes: ['built', 'refused'],
        inputs: [fc.oneof({ weight: 3, arbitrary: nastyString.filter(validQueueName) }, { weight: 3, arbitrary: nastyString }, { weight: 1, arbitrary: wrongType }), queueOptions, connectionArb],
        run: async (name, options, conn) => {
          const before = await snapshotAll();
          const connection = conn === 'url' ? server.url : conn === 'options-url' ? { url: server.url } : conn;
          const full = { ...options, connection } as QueueOptions; // a spread keeps `__proto__` an own key
          const verdict: Verdict = validQueueName(name) ? judge(full, validQueueOptions, ['connection']) : 'invalid';
          // the constructor is synchronous: no promise to wait for
          let q: Queue<unknown, unknown> | undefined;
          let error: unknown;
          try {
            q = new Queue<unknown, unknown>(name as string, full);
          } catch (e) {
            error = e;
          }
          if (mustRefuse(verdict, q !== undefined)) {
            if (q) await q.close();
            return expectRefused(q ? { ok: true, value: q.keys.tag } : { ok: false, error }, before, `new Queue(${safeShow(name)}, ${safeShow(full)})`);
          }
          if (!q) throw new Error(`new Queue(${safeShow(name)}, ${safeShow(full)}): expected a queue, got ${describeError(error)}`);
          const lo = loose(full, ['connection']);
          try {
            const prefix = lo.prefix ?? 'relq';
            const tag = /\{([^{}]+)\}/.exec(name as string)?.[1];
            expect(q.keys.tag).toBe(tag === undefined ? `{${prefix}:${name as string}}` : `{${prefix}:${tag}}{${name as string}}`);
            expect(await snapshotAll()).toEqual(before); // constructing writes nothing
            const bytes = Buffer.byteLength(JSON.stringify({ name }));
            if (bytes > (lo.maxPayloadBytes ?? 1024 * 1024)) {
              await expectRefused(await outcome(() => q!.add({ name })), before, 'add over maxPayloadBytes', PayloadTooLargeError);
              return 'built';
            }
            let id: string;
            if (lo.durability) {
              // applied, but no replica confirms it: NotReplicatedError carrying the result
              const out = await outcome(() => q!.add({ name }));
              if (out.ok || !(out.error instanceof NotReplicatedError)) throw new Error(`add with durability and no replica: ${out.ok ? 'a result' : describeError(out.error)}`);
              id = (out.error.result as { id: string }).id;
            } else id = (await q.add({ name })).id;
            const info = await q.getJob(id);
            expect(info?.data).toEqual({ name });
            expect(info?.state).toBe('pending');
            // every key the queue wrote carries its hash tag, but the registry of queue names
            const registry = registryKey(q.prefix);
            for (const key of Object.keys(await snapshotAll())) if (key !== registry) expect(key.startsWith(`${q.keys.tag}:`)).toBe(true);
            await checkStructure(q, 'queue with a fuzzed name');
            return 'built';
          } finally {
            await q.close();
          }
        },
      };
    }),
  ],
  [
    'add / tryAdd: payloads (JSON, non-JSON, cyclic, huge)',
    fuzzProperty(() => ({
      runs: 300,
      outcomes: ['accepted', 'refused'],
      inputs: [payloadArb, fc.constantFrom('add', 'tryAdd', 'addBulk', 'tryAddBulk')],
      run: async (data, how) => {
        const before = await snapshotAll();
        const json = payloadJson(data);
        const call = () => {
          switch (how) {
            case 'add':
              return plain.add(data);
            case 'tryAdd':
              return plain.tryAdd(data);
            case 'addBulk':
              return plain.addBulk([{ data }]).then((r) => r[0]!);
            default:
              return plain.tryAddBulk([{ data }]).then((r) => r[0]!);
          }
        };
        const out = await outcome(call);
        const what = `${how}(${safeShow(data)})`;
        const root = how === 'add' || how === 'tryAdd' ? 'data' : 'jobs[0].data';
        let seen: 'accepted' | 'refused';
        if (json === undefined) {
          seen = await expectRefused(out, before, what, ValidationError, under(root));
        } else if (Buffer.byteLength(json) > PAYLOAD_LIMIT) {
          seen = await expectRefused(out, before, what, PayloadTooLargeError, root);
        } else {
          const { id, created } = expectOk(out, what);
          expect(created).toBe(true);
          await verifyAdded(plain, id, data, undefined, true, what);
          await checkStructure(plain, what);
          seen = 'accepted';
        }
        // nothing leaked into the prototypes
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        return seen;
      },
    })),
  ],
  [
    'add / tryAdd: job options (numbers of every kind, wrong types, unknown keys, ids with odd characters)',
    fuzzProperty(() => ({
      runs: 400,
      outcomes: ['accepted', 'refused'],
      inputs: [jobOptionsOrJunk, fc.boolean()],
      run: async (opts, useTry) => {
        const before = await snapshotAll();
        const t0 = await redisNow();
        const out = await outcome(() => (useTry ? plain.tryAdd('d', opts as JobOptions) : plain.add('d', opts as JobOptions)));
        const what = `${useTry ? 'tryAdd' : 'add'}('d', ${safeShow(opts)})`;
        if (mustRefuse(judge(opts, (o) => validJobOptions(o, useTry ? 'tryAdd' : 'add')), out.ok)) {
          return expectRefused(out, before, what);
        }
        const { id, created } = expectOk(out, what);
        const o = (opts === null ? undefined : loose(opts)) as Record<string, unknown> | undefined;
        expect(created).toBe(true);
        if (o?.jobId !== undefined) expect(id).toBe(o.jobId);
        await verifyAdded(plain, id, 'd', o, true, what);
        const info = (await plain.getJob(id))!;
        if (typeof o?.delayMs === 'number' && o.delayMs > 0) {
          expect(info.runAt).toBeGreaterThanOrEqual(t0 + o.delayMs);
          expect(info.runAt).toBeLessThanOrEqual((await redisNow()) + o.delayMs);
        }
        await checkStructure(plain, what);
        // the policy round-trips to the lease holder
        if (info.state === 'pending') {
          const [lease] = await plain.lease({ count: 1000, leaseMs: 1000 });
          expect(lease?.job.id).toBe(id);
          const policy = lease!.job.policy;
          expect(policy.attempts).toBe(o?.attempts ?? 3);
          if (o?.leaseMs !== undefined) expect(policy.leaseMs).toBe(o.leaseMs);
          if (o?.keepCompletedMs !== undefined) expect(policy.keepCompletedMs).toBe(n0(o.keepCompletedMs));
          expect(policy.dedupWindowMs).toBe(o?.jobId === undefined ? 0 : n0(o?.dedupWindowMs ?? 86_400_000));
          if (typeof o?.backoff === 'number') expect(policy.backoff).toEqual({ type: 'fixed', delayMs: n0(o.backoff), jitter: 0 });
          else if (o?.backoff !== undefined) expect(policy.backoff).toEqual(expect.objectContaining(JSON.parse(JSON.stringify(o.backoff))));
          expect(lease!.deadline - lease!.job.leasedAt).toBe((o?.leaseMs as number | undefined) ?? 1000);
        }
        return 'accepted';
      },
    })),
  ],
  [
    'addBulk / tryAddBulk: hostile job arrays, items and bulk options (all or nothing)',
    fuzzProperty(() => {
      const item = fc.oneof(
        { weight: 6, arbitrary: fc.record({ data: fc.oneof(fc.jsonValue({ maxDepth: 2 }), nastyPayload), opts: jobOptionsOrJunk }, { requiredKeys: ['data'] }) },
        { weight: 1, arbitrary: fc.record({ data: fc.constant(1), opts: fc.constant(undefined), extra: fc.constant(1) }) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 5, 'job', [], { opts: {} }, JSON.parse('{"__proto__": {"data": 1}}')) },
        { weight: 2, arbitrary: fc.record({ data: fc.integer(), opts: fc.record({ jobId: fc.constantFrom('dup:1', 'dup*2') }) }) },
      );
      const jobsArb = fc.oneof({ weight: 8, arbitrary: fc.array(item, { maxLength: 6 }) }, { weight: 1, arbitrary: wrongType });
      const bulkOpts = fc.oneof(fc.constant(undefined), optionsArb({ waitMs: timerField(0) }), wrongType);
      return {
        runs: 250,
        outcomes: ['accepted', 'refused'],
        inputs: [jobsArb, bulkOpts, fc.boolean()],
        run: async (jobs, bopts, useTry) => {
          const before = await snapshotAll();
          const out = await outcome(() =>
            useTry ? plain.tryAddBulk(jobs as any) : plain.addBulk(jobs as any, bopts as { waitMs?: number } | undefined),
          );
          const what = `${useTry ? 'tryAddBulk' : 'addBulk'}(${safeShow(jobs)}, ${safeShow(bopts)})`;
          const bulkOptsOk = (b: unknown) => useTry || b === undefined || (isOptionsObject(b) && onlyKeys(b, ['waitMs']) && opt(b.waitMs, (x) => isInt(x, 0, MAX_TIMER_MS)));
          const itemsOk = (optsOf: (o: unknown) => unknown) =>
            Array.isArray(jobs) &&
            jobs.every((j) => {
              if (!isOptionsObject(j) || !onlyKeys(j, ['data', 'opts'])) return false;
              const json = payloadJson(j.data);
              return json !== undefined && Buffer.byteLength(json) <= PAYLOAD_LIMIT && validJobOptions(optsOf(j.opts), useTry ? 'tryAddBulk' : 'addBulk');
            });
          const verdict: Verdict =
            bulkOptsOk(bopts) && itemsOk((o) => o) ? 'valid' : bulkOptsOk(loose(bopts)) && itemsOk((o) => loose(o)) ? 'either' : 'invalid';
          if (mustRefuse(verdict, out.ok)) {
            return expectRefused(out, before, what); // PayloadTooLargeError is a ValidationError too
          }
          const results = expectOk(out, what);
          const list = (jobs as Array<{ data: unknown; opts?: Record<string, unknown> }>).map((j) => ({ data: j.data, opts: j.opts === null ? undefined : loose(j.opts) }));
          expect(results).toHaveLength(list.length);
          const seen = new Set<string>();
          for (let i = 0; i < list.length; i++) {
            const custom = list[i]!.opts?.jobId as string | undefined;
            const dup = custom !== undefined && seen.has(custom);
            if (custom !== undefined) seen.add(custom);
            expect(results[i]!.created).toBe(!dup);
            if (custom !== undefined) expect(results[i]!.id).toBe(custom);
            await verifyAdded(plain, results[i]!.id, list[i]!.data, list[i]!.opts, !dup, what);
          }
          await checkStructure(plain, what);
          expect((await plain.counts()).pending + (await plain.counts()).delayed).toBe(results.filter((r) => r.created).length);
          return 'accepted';
        },
      };
    }),
  ],
  [
    'tryAdd / tryAddBulk on a full bounded queue: QueueFullError with nothing written, or a ValidationError',
    fuzzProperty(() => {
      const bounded = track(new Queue<unknown, unknown>('bounded', { connection: server.url, prefix: 'fz', bound: 1 }));
      return {
        runs: 150,
        outcomes: ['full', 'duplicate', 'refused'],
        mustSee: ['full', 'refused'],
        inputs: [jobOptionsOrJunk, fc.boolean()],
        run: async (opts, bulk) => {
          await bounded.add('the one', { jobId: 'held' });
          const before = await snapshotAll();
          const out = await outcome(() => (bulk ? bounded.tryAddBulk([{ data: 'd', opts: opts as JobOptions }]).then((r) => r[0]!) : bounded.tryAdd('d', opts as JobOptions)));
          const what = `${bulk ? 'tryAddBulk' : 'tryAdd'}('d', ${safeShow(opts)}) on a full queue`;
          if (mustRefuse(judge(opts, (o) => validJobOptions(o, bulk ? 'tryAddBulk' : 'tryAdd')), out.ok)) return expectRefused(out, before, what);
          if ((opts as Record<string, unknown> | null | undefined)?.jobId === 'held') {
            expect(expectOk(out, what)).toEqual({ id: 'held', created: false }); // a duplicate needs no room
            expect(await snapshotAll()).toEqual(before);
            return 'duplicate';
          }
          await expectRefused(out, before, what, QueueFullError);
          return 'full';
        },
      };
    }),
  ],
  [
    'lease options',
    fuzzProperty(() => {
      const leaseOpts = fc.oneof(
        { weight: 8, arbitrary: optionsArb({ count: field(intIn(1, 1000), numberish), leaseMs: field(intIn(MIN_LEASE_MS, MAX_MS), numberish), blockMs: timerField(0) }) },
        { weight: 1, arbitrary: wrongType },
      );
      return {
        runs: 250,
        outcomes: ['accepted', 'refused'],
        inputs: [leaseOpts],
        run: async (opts) => {
          const { id } = await plain.add('to lease');
          const before = await snapshotAll();
          const verdict = judge(
            opts,
            (o) =>
              isOptionsObject(o) &&
              onlyKeys(o, ['count', 'leaseMs', 'blockMs']) &&
              opt(o.count, (x) => isInt(x, 1, 1000)) &&
              opt(o.leaseMs, (x) => isInt(x, MIN_LEASE_MS, MAX_MS)) &&
              opt(o.blockMs, (x) => isInt(x, 0, MAX_TIMER_MS)),
          );
          const o = loose(opts) as Record<string, unknown>;
          const out = await outcome(() => plain.lease(opts as any));
          const what = `lease(${safeShow(opts)})`;
          if (mustRefuse(verdict, out.ok)) {
            return expectRefused(out, before, what);
          }
          const leases = expectOk(out, what);
          expect(leases.map((l) => l.job.id)).toEqual([id]);
          expect(leases[0]!.deadline - leases[0]!.job.leasedAt).toBe((o.leaseMs as number | undefined) ?? 30_000);
          const info = await plain.getJob(id);
          expect(info?.state).toBe('working');
          expect(info?.leaseDeadline).toBe(leases[0]!.deadline);
          await checkStructure(plain, what);
          return 'accepted';
        },
      };
    }),
  ],
  [
    'nack / requeue / reject: options, error values and reasons',
    fuzzProperty(() => {
      // any value at all: JSON, non-JSON, strings, errors, and values with neither JSON nor a prototype
      const errorValue = fc.oneof(
        payloadArb,
        wrongType,
        nastyString,
        fc.constant(new Error('boom')),
        fc.constant(Object.assign(new Error(''), { name: '' })),
        fc.integer({ min: 0, max: 2 }).map((i) => unprintables()[i]),
      );
      const nackOpts = fc.oneof({ weight: 8, arbitrary: optionsArb({ error: field(errorValue, errorValue), delayMs: field(intIn(0, MAX_MS), numberish) }) }, { weight: 1, arbitrary: wrongType });
      // requeue's reason must be a string: anything else is refused
      const reasonArb = stringish;
      const requeueOpts = fc.oneof({ weight: 8, arbitrary: optionsArb({ delayMs: field(intIn(0, MAX_MS), numberish), reason: field(reasonArb, reasonArb) }) }, { weight: 1, arbitrary: wrongType });
      return {
        runs: 250,
        outcomes: ['accepted', 'refused'],
        inputs: [fc.constantFrom('nack', 'requeue', 'reject'), nackOpts, requeueOpts, errorValue],
        run: async (op, nOpts, qOpts, reason) => {
          const lease = await leasedJob({ attempts: 2 });
          const before = await snapshotAll();
          const given = (op === 'nack' ? nOpts : qOpts) as Record<string, unknown>;
          const keys = op === 'nack' ? ['error', 'delayMs'] : ['delayMs', 'reason'];
          const verdict: Verdict =
            op === 'reject'
              ? 'valid'
              : judge(given, (o) => isOptionsObject(o) && onlyKeys(o, keys) && opt(o.delayMs, (x) => isInt(x, 0, MAX_MS)) && (op === 'nack' || opt(o.reason, (x) => typeof x === 'string')), ['error']);
          const call = () => (op === 'nack' ? plain.nack(lease, given as any) : op === 'requeue' ? plain.requeue(lease, given as any) : plain.reject(lease, reason));
          const out = await outcome(call);
          const what = `${op}(lease, ${safeShow(op === 'reject' ? reason : given)})`;
          const opts = loose(given, ['error']);
          if (mustRefuse(verdict, out.ok)) {
            return expectRefused(out, before, what);
          }
          expect(expectOk(out, what)).toBe(true);
          const info = (await plain.getJob(lease.job.id))!;
          const delayed = typeof opts?.delayMs === 'number' && opts.delayMs > 0;
          if (op === 'reject') {
            expect(info.state).toBe('dead');
            expect(info.lastError).toEqual(reason === undefined ? 'rejected' : errorText(reason));
          } else if (op === 'nack') {
            expect(info.failures).toBe(1);
            // no delayMs: the default exponential backoff (~1 s) delays the retry
            expect(info.state).toBe(delayed || opts.delayMs === undefined ? 'delayed' : 'pending');
            expect(info.lastError).toEqual(opts.error === undefined ? 'failed' : errorText(opts.error));
          } else {
            expect(info.failures).toBe(0);
            expect(info.requeues).toBe(1);
            expect(info.state).toBe(delayed ? 'delayed' : 'pending');
          }
          await checkStructure(plain, what);
          return 'accepted';
        },
      };
    }),
  ],
  [
    'ack / ackBatch: result payloads',
    fuzzProperty(() => ({
      runs: 200,
      outcomes: ['accepted', 'refused'],
      inputs: [payloadArb, fc.boolean()],
      run: async (result, batch) => {
        const lease = await leasedJob();
        const before = await snapshotAll();
        const out = await outcome(() => (batch ? plain.ackBatch([{ lease, result }]).then((r) => r[0]) : plain.ack(lease, result)));
        const what = `${batch ? 'ackBatch' : 'ack'}(lease, ${safeShow(result)})`;
        const json = result === undefined ? 'null' : payloadJson(result);
        if (json === undefined || Buffer.byteLength(json) > PAYLOAD_LIMIT) {
          return expectRefused(out, before, what, json === undefined ? ValidationError : PayloadTooLargeError, under('result'));
        }
        expect(expectOk(out, what)).toBe(true);
        const info = (await plain.getJob(lease.job.id))!;
        expect(info.state).toBe('completed');
        expect(JSON.stringify(info.result ?? null)).toBe(json);
        await checkStructure(plain, what);
        return 'accepted';
      },
    })),
  ],
  [
    'ack / nack / requeue / reject / touch / updateProgress / log / ackBatch: things that are not leases (ValidationError naming the lease, nothing written)',
    fuzzProperty(() => {
      /** Not a lease: junk, or a real lease with a required part (job.id, token) missing or of a wrong type. */
      const notLeases: Record<string, (l: Lease<unknown>) => unknown> = {
        null: () => null,
        undefined: () => undefined,
        empty: () => ({}),
        string: () => 'lease',
        number: () => 42,
        array: () => [],
        'empty job': () => ({ job: {} }),
        'null job': (l) => ({ ...l, job: null }),
        'no job': (l) => ({ token: l.token, deadline: l.deadline, leaseMs: l.leaseMs }),
        'numeric id': (l) => ({ ...l, job: { ...l.job, id: 1 } }),
        'no token': (l) => ({ ...l, token: undefined }),
        'numeric token': (l) => ({ ...l, token: 7 }),
        'as JSON text': (l) => JSON.stringify(l),
        'a job, not a lease': (l) => l.job,
      };
      const notLeaseArb = fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...Object.keys(notLeases)) },
        { weight: 1, arbitrary: fc.anything({ maxDepth: 2, maxKeys: 3 }).map((v) => ({ anything: v })) },
      );
      /** ackBatch items: the real lease (bare or with a result), or something else (bare or as { lease }). */
      const itemArb = fc.record({ real: fc.boolean(), wrapped: fc.boolean(), bad: notLeaseArb });
      const ops = ['ack', 'nack', 'requeue', 'reject', 'touch', 'updateProgress', 'log', 'ackBatch', 'ackBatch of a non-array'] as const;
      return {
        runs: 250,
        outcomes: ['refused', 'settled'],
        inputs: [fc.constantFrom(...ops), notLeaseArb, fc.array(itemArb, { minLength: 1, maxLength: 3 })],
        run: async (op, bad, items) => {
          const lease = await leasedJob();
          const before = await snapshotAll();
          const make = (b: string | { anything: unknown }): unknown => (typeof b === 'string' ? notLeases[b]!(lease) : b.anything);
          const junk = make(bad);
          let call: () => unknown;
          let field: string | undefined;
          switch (op) {
            case 'ack':
              call = () => plain.ack(junk as any, { r: 1 });
              field = 'lease';
              break;
            case 'nack':
              call = () => plain.nack(junk as any, { error: 'e', delayMs: 0 });
              field = 'lease';
              break;
            case 'requeue':
              call = () => plain.requeue(junk as any, { reason: 'r' });
              field = 'lease';
              break;
            case 'reject':
              call = () => plain.reject(junk as any, 'r');
              field = 'lease';
              break;
            case 'touch':
              call = () => plain.touch(junk as any, 1000);
              field = 'lease';
              break;
            case 'updateProgress':
              call = () => plain.updateProgress(junk as any, { done: 1 });
              field = 'lease';
              break;
            case 'log':
              call = () => plain.log(junk as any, 'line');
              field = 'lease';
              break;
            case 'ackBatch of a non-array':
              call = () => plain.ackBatch((Array.isArray(junk) ? lease : junk) as any);
              field = 'leases';
              break;
            default: {
              const arg = items.map((it) => {
                const l = it.real ? lease : make(it.bad);
                return it.wrapped ? { lease: l, result: 'r' } : l;
              });
              const first = items.findIndex((it) => !it.real);
              field = first < 0 ? undefined : items[first]!.wrapped ? `leases[${first}].lease` : `leases[${first}]`;
              call = () => plain.ackBatch(arg as any);
            }
          }
          const out = await outcome(call);
          const what = `${op}(${op === 'ackBatch' ? safeShow(items) : safeShow(bad)})`;
          if (field !== undefined) {
            await expectRefused(out, before, what, ValidationError, field);
            expect((await plain.getJob(lease.job.id))?.state).toBe('working'); // the real lease of a refused batch is untouched
            return 'refused';
          }
          // only the real lease, one or more times: the first settles it, the others are refused
          expect(expectOk(out, what)).toEqual(items.map((_, i) => i === 0));
          expect((await plain.getJob(lease.job.id))?.state).toBe('completed');
          await checkStructure(plain, what);
          return 'settled';
        },
      };
    }),
  ],
  [
    'touch extendMs, sweep options, listDead options',
    fuzzProperty(() => {
      const sweepOpts = fc.oneof({ weight: 8, arbitrary: optionsArb({ limit: field(intIn(1, 100_000), numberish) }) }, { weight: 1, arbitrary: wrongType });
      const listOpts = fc.oneof(
        { weight: 8, arbitrary: optionsArb({ offset: field(intIn(0, Number.MAX_SAFE_INTEGER), numberish), limit: field(intIn(1, 10_000), numberish) }) },
        { weight: 1, arbitrary: wrongType },
      );
      return {
        runs: 250,
        outcomes: ['ok', 'refused'],
        inputs: [fc.constantFrom('touch', 'sweep', 'listDead'), fc.oneof(intIn(1, MAX_MS), numberish), sweepOpts, listOpts],
        run: async (op, extendMs, sOpts, lOpts) => {
          const lease = await leasedJob({ attempts: 1 });
          await plain.add('dead one', { jobId: 'dead:1', attempts: 1 });
          const [toKill] = await plain.lease({ leaseMs: 600_000 });
          await plain.reject(toKill!, 'x');
          await plain.add('later', { delayMs: 1 });
          const before = await snapshotAll();
          const what = `${op}(${safeShow(op === 'touch' ? extendMs : op === 'sweep' ? sOpts : lOpts)})`;
          if (op === 'touch') {
            const valid = opt(extendMs, (x) => isInt(x, 1, MAX_MS));
            const t0 = await redisNow();
            const out = await outcome(() => plain.touch(lease, extendMs as number | undefined));
            if (!valid) return expectRefused(out, before, what);
            expect(expectOk(out, what)).toBe(true);
            const ext = (extendMs as number | undefined) ?? 600_000;
            expect(lease.deadline).toBeGreaterThanOrEqual(t0 + ext);
            expect(lease.deadline).toBeLessThanOrEqual((await redisNow()) + ext);
            expect((await plain.getJob(lease.job.id))?.leaseDeadline).toBe(lease.deadline);
          } else if (op === 'sweep') {
            const verdict = judge(sOpts, (o) => isOptionsObject(o) && onlyKeys(o, ['limit']) && opt(o.limit, (x) => isInt(x, 1, 100_000)));
            const out = await outcome(() => plain.sweep(sOpts as any));
            if (mustRefuse(verdict, out.ok)) return expectRefused(out, before, what);
            const r = expectOk(out, what);
            for (const v of Object.values(r)) expect(Number.isInteger(v) && v >= 0).toBe(true);
            expect(r.stalled).toBe(0); // the lease is 10 minutes long
          } else {
            const verdict = judge(
              lOpts,
              (o) => isOptionsObject(o) && onlyKeys(o, ['offset', 'limit']) && opt(o.offset, (x) => isInt(x, 0, Number.MAX_SAFE_INTEGER)) && opt(o.limit, (x) => isInt(x, 1, 10_000)),
            );
            const o = loose(lOpts) as Record<string, unknown>;
            const out = await outcome(() => plain.listDead(lOpts as any));
            if (mustRefuse(verdict, out.ok)) return expectRefused(out, before, what);
            const list = expectOk(out, what);
            expect(list.map((d) => d.id)).toEqual(((o.offset as number | undefined) ?? 0) === 0 ? ['dead:1'] : []);
            expect(await snapshotAll()).toEqual(before); // a read writes nothing
          }
          await checkStructure(plain, what);
          return 'ok';
        },
      };
    }),
  ],
  [
    'getJob: ids (a legal id with odd characters reads back its job)',
    fuzzProperty(() => ({
      runs: 300,
      outcomes: ['found', 'missing', 'refused'],
      inputs: [fc.oneof(nastyString, wrongType, fc.constant(undefined)), fc.boolean()],
      run: async (id, addFirst) => {
        const added = addFirst && validNewJobId(id);
        if (added) {
          const r = await plain.add({ id }, { jobId: id });
          expect(r).toEqual({ id, created: true });
        }
        const before = await snapshotAll();
        const out = await outcome(() => plain.getJob(id as string));
        const what = `getJob(${safeShow(id)})`;
        if (!validJobId(id)) return expectRefused(out, before, what);
        const info = expectOk(out, what);
        if (added) {
          expect(info?.id).toBe(id);
          expect(info?.data).toEqual({ id });
        } else {
          expect(info).toBeNull();
        }
        expect(await snapshotAll()).toEqual(before);
        return added ? 'found' : 'missing';
      },
    })),
  ],
  [
    'retryDead / purgeDead: ids and limits',
    fuzzProperty(() => {
      // the same id often more than once: it is moved / removed once and returned once
      const idList = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('dead:1', 'dead*2', 'alive', 'nope') }, { weight: 1, arbitrary: nastyString }, { weight: 1, arbitrary: wrongType }), { maxLength: 5 });
      const targetArb = fc.oneof(
        { weight: 4, arbitrary: idList },
        { weight: 3, arbitrary: optionsArb({ limit: fc.oneof(intIn(1, 10_000), numberish) }) },
        { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) },
      );
      return {
        runs: 200,
        outcomes: ['ok', 'refused', 'repeated'],
        inputs: [fc.constantFrom('retryDead', 'purgeDead'), targetArb],
        run: async (op, target) => {
          for (const jobId of ['dead:1', 'dead*2']) {
            await plain.add(jobId, { jobId, attempts: 1 });
            const [l] = await plain.lease({ leaseMs: 600_000 });
            await plain.reject(l!, 'x');
          }
          await plain.add('alive', { jobId: 'alive' });
          const dead = (await plain.listDead()).map((d) => d.id); // oldest first (ties: by id)
          expect([...dead].sort()).toEqual(['dead*2', 'dead:1']);
          const before = await snapshotAll();
          const out = await outcome(() => (op === 'retryDead' ? plain.retryDead(target as any) : plain.purgeDead(target as any)));
          const what = `${op}(${safeShow(target)})`;
          let expected: string[];
          let repeated = false;
          if (Array.isArray(target)) {
            if (!target.every(validJobId)) return expectRefused(out, before, what);
            expected = [...new Set(target as string[])].filter((id) => dead.includes(id)); // first mention, once
            repeated = new Set(target).size < target.length;
          } else {
            const t = target as Record<string, unknown>;
            if (!isOptionsObject(target) || !onlyKeys(t, ['limit']) || !isInt(t.limit, 1, 10_000)) {
              return expectRefused(out, before, what);
            }
            expected = dead.slice(0, t.limit as number); // the oldest
          }
          expect(expectOk(out, what)).toEqual(expected);
          for (const id of dead) {
            const info = await plain.getJob(id);
            if (!expected.includes(id)) expect(info?.state).toBe('dead');
            else if (op === 'purgeDead') expect(info).toBeNull();
            else expect(info?.state).toBe('pending');
          }
          expect((await plain.getJob('alive'))?.state).toBe('pending');
          await checkStructure(plain, what);
          return repeated ? ['ok', 'repeated'] : 'ok';
        },
      };
    }),
  ],
  [
    'getJobs / remove / promote / retry / changePriority / clean / drain: ids, states, pages, options, limits and priorities',
    fuzzProperty(() => {
      const JOB_STATES = ['pending', 'working', 'delayed', 'completed', 'dead', 'waiting-children'];
      const CLEAN_STATES = ['completed', 'dead'];
      const KNOWN = ['p:1', 'p*2', 'g:1', 'd:1', 'held', 'dead:1', 'done:1'];
      const idArb = fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...KNOWN, 'held', 'held', 'g:1', 'g:1', 'nope') },
        { weight: 3, arbitrary: nastyString },
        { weight: 1, arbitrary: wrongType },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      const stateArb = (valid: string[]) =>
        fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom(...valid) },
          { weight: 2, arbitrary: fc.constantFrom(...JOB_STATES, 'PENDING', 'active', 'failed', 'waiting', 'completed ', '') },
          { weight: 1, arbitrary: nastyString },
          { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) },
        );
      const orderArb = field(fc.constantFrom('asc', 'desc'), fc.oneof(fc.constantFrom('ASC', 'descending', '', 'reverse'), wrongType));
      const pageArb = fc.oneof(
        {
          weight: 8,
          arbitrary: optionsArb({ start: field(fc.oneof(intIn(0, 8), intIn(0, 8), intIn(0, 2 ** 40)), numberish), end: field(fc.oneof(intIn(0, 8), intIn(8, 12), intIn(0, 20_000)), numberish), order: orderArb }),
        },
        { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) },
      );
      const removeOptsArb = fc.oneof(
        { weight: 8, arbitrary: optionsArb({ force: field(fc.boolean(), boolish) }) },
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: wrongType },
      );
      const priorityArb = fc.oneof({ weight: 3, arbitrary: intIn(-1000, 1000) }, { weight: 3, arbitrary: numberish });
      const cleanOptsArb = fc.oneof(
        {
          weight: 8,
          arbitrary: optionsArb({
            olderThanMs: field(fc.oneof(fc.constantFrom(0, 1, 2, 600_000), intIn(0, MAX_MS)), numberish),
            limit: field(intIn(1, 10_000), numberish),
          }),
        },
        { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) },
      );
      const ops = ['getJobs', 'getJobs', 'remove', 'remove', 'promote', 'retry', 'changePriority', 'changePriority', 'clean', 'drain'] as const;
      return {
        runs: 400,
        outcomes: ['refused', 'leasedRefused', 'groupedRefused', 'notRetryable', 'nothingToDo', 'changed', 'pages'],
        // the two refusals that need a particular id are pinned below as well (rarer here)
        mustSee: ['refused', 'nothingToDo', 'changed', 'pages', 'notRetryable', ['leasedRefused', 'groupedRefused']],
        inputs: [
          fc.constantFrom(...ops),
          idArb,
          stateArb(JOB_STATES),
          stateArb(CLEAN_STATES),
          pageArb,
          removeOptsArb,
          priorityArb,
          cleanOptsArb,
        ],
        run: async (op, id, state, cleanState, page, removeOpts, priority, cleanOpts) => {
          // one job in every state: leased first (priority 1000), then the waiting ones
          const settled = async (jobId: string, how: 'held' | 'ack' | 'reject') => {
            await plain.add(jobId, { jobId, priority: 1000, attempts: 1 });
            const [l] = await plain.lease({ leaseMs: 600_000 });
            expect(l?.job.id).toBe(jobId);
            if (how === 'ack') expect(await plain.ack(l!, 'r')).toBe(true);
            if (how === 'reject') expect(await plain.reject(l!, 'no')).toBe(true);
          };
          await settled('held', 'held');
          await settled('dead:1', 'reject');
          await settled('done:1', 'ack');
          await plain.add('p', { jobId: 'p:1' });
          await plain.add('p', { jobId: 'p*2', priority: 5 });
          await plain.add('g', { jobId: 'g:1', group: 'grp' });
          await plain.add('d', { jobId: 'd:1', delayMs: 600_000 });
          const stateOf: Record<string, string> = { held: 'working', 'dead:1': 'dead', 'done:1': 'completed', 'p:1': 'pending', 'p*2': 'pending', 'g:1': 'pending', 'd:1': 'delayed' };
          const finishedAt = { 'done:1': (await plain.getJob('done:1'))!.completedAt!, 'dead:1': (await plain.getJob('dead:1'))!.diedAt! };
          const before = await snapshotAll();
          const unchanged = async (what: string) => {
            expect(await snapshotAll()).toEqual(before);
            void what;
            return 'nothingToDo' as const;
          };
          const exists = typeof id === 'string' && Object.hasOwn(stateOf, id); // not 'constructor' and the like
          switch (op) {
            case 'getJobs': {
              const what = `getJobs(${safeShow(state)}, ${safeShow(page)})`;
              const out = await outcome(() => plain.getJobs(state as any, page as any));
              const verdict = judge(page, (p) => {
                if (p === undefined) return true;
                if (!isOptionsObject(p) || !onlyKeys(p, ['start', 'end', 'order'])) return false;
                const start = p.start ?? 0;
                if (!isInt(start, 0, 2 ** 40)) return false;
                return opt(p.end, (e) => isInt(e, start as number, (start as number) + 9_999)) && opt(p.order, (o) => o === 'asc' || o === 'desc');
              });
              if (!JOB_STATES.includes(state as string) || mustRefuse(verdict, out.ok)) return expectRefused(out, before, what);
              const p = (loose(page) ?? {}) as { start?: number; end?: number; order?: string };
              const asc = {
                pending: ['p*2', 'p:1', 'g:1'],
                working: ['held'],
                delayed: ['d:1'],
                completed: ['done:1'],
                dead: ['dead:1'],
                'waiting-children': [],
              }[state as string]!;
              const start = p.start ?? 0;
              const expected = (p.order === 'desc' ? [...asc].reverse() : asc).slice(start, (p.end ?? start + 99) + 1);
              const list = expectOk(out, what);
              expect(list.map((j) => [j.id, j.state])).toEqual(expected.map((x) => [x, state]));
              // a read
              return [await unchanged(what), 'pages'];
            }
            case 'remove': {
              const what = `remove(${safeShow(id)}, ${safeShow(removeOpts)})`;
              const out = await outcome(() => plain.remove(id as string, removeOpts as any));
              const verdict = validJobId(id) ? judge(removeOpts, (o) => o === undefined || (isOptionsObject(o) && onlyKeys(o, ['force']) && opt(o.force, isBool))) : 'invalid';
              if (mustRefuse(verdict, out.ok || out.error instanceof JobLeasedError)) return expectRefused(out, before, what);
              const force = (loose(removeOpts) as { force?: boolean } | undefined)?.force ?? false;
              if (id === 'held' && !force) {
                await expectRefused(out, before, what, JobLeasedError);
                return 'leasedRefused';
              }
              expect(expectOk(out, what)).toBe(exists);
              if (!exists) return unchanged(what);
              expect(await plain.getJob(id as string)).toBeNull();
              // the id may be added again at once
              expect(await plain.add('again', { jobId: id as string })).toEqual({ id, created: true });
              break;
            }
            case 'promote': {
              const what = `promote(${safeShow(id)})`;
              const out = await outcome(() => plain.promote(id as string));
              if (!validJobId(id)) return expectRefused(out, before, what);
              expect(expectOk(out, what)).toBe(id === 'd:1');
              if (id !== 'd:1') return unchanged(what);
              expect((await plain.getJob(id))?.state).toBe('pending');
              break;
            }
            case 'retry': {
              const what = `retry(${safeShow(id)})`;
              const out = await outcome(() => plain.retry(id as string));
              if (!validJobId(id)) return expectRefused(out, before, what);
              if (id !== 'dead:1' && id !== 'done:1') {
                await expectRefused(out, before, what, JobNotRetryableError);
                expect((out as { error: JobNotRetryableError }).error.state).toBe(exists ? stateOf[id] : undefined);
                return 'notRetryable';
              }
              expect(expectOk(out, what)).toBe(stateOf[id]);
              expect(await plain.getJob(id)).toMatchObject({ state: 'pending', retries: 1, data: id === 'dead:1' ? 'dead:1' : 'done:1' });
              break;
            }
            case 'changePriority': {
              const what = `changePriority(${safeShow(id)}, ${safeShow(priority)})`;
              const out = await outcome(() => plain.changePriority(id as string, priority as number));
              if (!validJobId(id) || !isInt(priority, -1000, 1000)) return expectRefused(out, before, what);
              if (id === 'g:1') {
                await expectRefused(out, before, what, ValidationError, 'priority');
                return 'groupedRefused';
              }
              const changes = exists && stateOf[id as string] !== 'completed';
              expect(expectOk(out, what)).toBe(changes);
              const had = ['p:1', 'd:1'].includes(id as string) ? 0 : id === 'p*2' ? 5 : 1000;
              if (!changes || had === n0(priority)) return unchanged(what); // nothing to do, or the priority it had
              const info = await plain.getJob(id as string);
              expect({ priority: info?.priority, state: info?.state }).toEqual({ priority: n0(priority), state: stateOf[id as string] });
              if (id === 'p:1' || id === 'p*2') {
                // a pending job moves behind the jobs of its new priority
                const other = id === 'p:1' ? 'p*2' : 'p:1';
                const otherPriority = other === 'p:1' ? 0 : 5;
                const order = (await plain.getJobs('pending')).map((j) => j.id);
                expect(order).toEqual([...((priority as number) > otherPriority ? [id, other] : [other, id]), 'g:1']);
              }
              break;
            }
            case 'clean': {
              const what = `clean(${safeShow(cleanState)}, ${safeShow(cleanOpts)})`;
              const t0 = await redisNow();
              const out = await outcome(() => plain.clean(cleanState as any, cleanOpts as any));
              const t1 = await redisNow();
              const verdict = CLEAN_STATES.includes(cleanState as string)
                ? judge(cleanOpts, (o) => o === undefined || (isOptionsObject(o) && onlyKeys(o, ['olderThanMs', 'limit']) && opt(o.olderThanMs, (x) => isInt(x, 0, MAX_MS)) && opt(o.limit, (x) => isInt(x, 1, 10_000))))
                : 'invalid';
              if (mustRefuse(verdict, out.ok)) return expectRefused(out, before, what);
              const older = (loose(cleanOpts) as { olderThanMs?: number } | undefined)?.olderThanMs ?? 0;
              const job = cleanState === 'completed' ? 'done:1' : 'dead:1';
              const at = finishedAt[job];
              const ids = expectOk(out, what);
              // old enough by the cutoff the call took (now - olderThanMs, some time within [t0, t1])
              if (at <= t0 - older) expect(ids).toEqual([job]);
              else if (at > t1 - older) expect(ids).toEqual([]);
              else expect([[], [job]]).toContainEqual(ids);
              if (ids.length === 0) return unchanged(what);
              expect(await plain.getJob(job)).toBeNull();
              break;
            }
            case 'drain': {
              expect(await plain.drain()).toBe(4); // p:1, p*2, g:1, d:1
              for (const [jobId, s] of Object.entries(stateOf)) expect([jobId, (await plain.getJob(jobId))?.state]).toEqual([jobId, ['pending', 'delayed'].includes(s) ? undefined : s]);
              expect(await plain.drain()).toBe(0);
              break;
            }
          }
          await checkStructure(plain, op);
          return 'changed';
        },
      };
    }),
  ],
  [
    'updateProgress / log: progress values (numbers, JSON, non-JSON, huge), lines (huge, non-strings), current and stale leases',
    fuzzProperty(() => {
      const progressArb = fc.oneof({ weight: 4, arbitrary: payloadArb }, { weight: 2, arbitrary: nastyNumber }, { weight: 1, arbitrary: wrongType });
      const HUGE_LINES = ['x'.repeat(PAYLOAD_LIMIT), 'x'.repeat(PAYLOAD_LIMIT + 1), 'é'.repeat(PAYLOAD_LIMIT / 2), 'é'.repeat(PAYLOAD_LIMIT / 2 + 1), '😀'.repeat(PAYLOAD_LIMIT / 4), '😀'.repeat(PAYLOAD_LIMIT / 4 + 1), '\ud800'.repeat(PAYLOAD_LIMIT / 3 + 1)];
      const lineArb = fc.oneof({ weight: 4, arbitrary: nastyString }, { weight: 2, arbitrary: fc.constantFrom(...HUGE_LINES) }, { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) });
      return {
        runs: 300,
        outcomes: ['stored', 'stale', 'refused', 'tooLarge'],
        inputs: [fc.constantFrom('updateProgress', 'log'), progressArb, lineArb, fc.boolean()],
        run: async (op, progress, line, current) => {
          const lease = await leasedJob();
          const held = current ? lease : { ...lease, token: `${lease.token}x` }; // another token: a stale lease
          const before = await snapshotAll();
          const what = `${op}(${current ? 'current' : 'stale'} lease, ${safeShow(op === 'log' ? line : progress)})`;
          let json: string | undefined;
          let tooLarge = false;
          if (op === 'updateProgress') {
            const shape = (typeof progress === 'number' && Number.isFinite(progress)) || (typeof progress === 'object' && progress !== null);
            json = shape ? payloadJson(progress) : undefined;
            tooLarge = json !== undefined && Buffer.byteLength(json) > PAYLOAD_LIMIT;
          } else {
            json = typeof line === 'string' ? line : undefined;
            tooLarge = json !== undefined && Buffer.byteLength(json) > PAYLOAD_LIMIT;
          }
          const out = await outcome(() => (op === 'log' ? plain.log(held, line as string) : plain.updateProgress(held, progress as any)));
          if (json === undefined) return expectRefused(out, before, what, ValidationError, op === 'log' ? 'line' : under('progress'));
          if (tooLarge) {
            await expectRefused(out, before, what, PayloadTooLargeError, op === 'log' ? 'line' : 'progress');
            return 'tooLarge';
          }
          expect(expectOk(out, what)).toBe(current);
          if (!current) {
            expect(await snapshotAll()).toEqual(before);
            return 'stale';
          }
          const info = await plain.getJob(lease.job.id);
          if (op === 'log') expect(info?.logs).toEqual([Buffer.from(line as string, 'utf8').toString('utf8')]);
          else expect(info?.progress).toEqual(JSON.parse(json));
          expect(info?.state).toBe('working');
          await checkStructure(plain, what);
          return 'stored';
        },
      };
    }),
  ],
  [
    'maxLogLines: the queue option (1 to 100 000), and the lines it keeps',
    fuzzProperty(() => ({
      runs: 60,
      outcomes: ['kept', 'refused'],
      inputs: [fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: intIn(1, 100_000) }, { weight: 2, arbitrary: numberish }), fc.integer({ min: 1, max: 6 })],
      run: async (maxLogLines, n) => {
        const before = await snapshotAll();
        let q: Queue<unknown, unknown> | undefined;
        const out = await outcome(() => (q = new Queue<unknown, unknown>('lines', { connection: server.url, prefix: 'fz', maxLogLines: maxLogLines as number })));
        const what = `new Queue('lines', { maxLogLines: ${safeShow(maxLogLines)} })`;
        try {
          if (!opt(maxLogLines, (x) => isInt(x, 1, 100_000))) return expectRefused(out, before, what, ValidationError, 'maxLogLines');
          expectOk(out, what);
          await q!.add('x');
          const [lease] = await q!.lease({ leaseMs: 600_000 });
          const lines = Array.from({ length: n }, (_, i) => `line ${i}`);
          for (const line of lines) expect(await q!.log(lease!, line)).toBe(true);
          const max = (maxLogLines as number | undefined) ?? 100;
          expect((await q!.getJob(lease!.job.id))?.logs).toEqual(lines.slice(-max));
          return 'kept';
        } finally {
          await q?.close();
        }
      },
    })),
  ],
  [
    'deleteQueue options',
    fuzzProperty(() => {
      const q = track(new Queue<unknown, unknown>('doomed', { connection: server.url, prefix: 'fz' }));
      // tombstoneMs is a key's TTL, not a Node timer: up to 2^31
      const deleteOpts = fc.oneof({ weight: 8, arbitrary: optionsArb({ tombstoneMs: field(intIn(1, 2 ** 31), numberish) }) }, { weight: 1, arbitrary: wrongType });
      return {
        runs: 120,
        outcomes: ['ok', 'refused'],
        inputs: [deleteOpts],
        run: async (opts) => {
          await q.add('x');
          await q.add('y', { delayMs: 60_000 });
          const before = await snapshotAll();
          const verdict = judge(opts, (x) => isOptionsObject(x) && onlyKeys(x, ['tombstoneMs']) && opt(x.tombstoneMs, (t) => isInt(t, 1, 2 ** 31)));
          const o = loose(opts) as Record<string, unknown>;
          const out = await outcome(() => q.deleteQueue(opts as any));
          const what = `deleteQueue(${safeShow(opts)})`;
          if (mustRefuse(verdict, out.ok)) return expectRefused(out, before, what);
          expect(expectOk(out, what)).toBeGreaterThan(0);
          const ttl = (o.tombstoneMs as number | undefined) ?? 10_000;
          const after = await snapshotAll();
          // only the tombstone is left, and it expires
          for (const [key, kv] of Object.entries(after)) {
            expect(key.startsWith(`${q.keys.tag}:`)).toBe(true);
            expect([key, kv.expires]).toEqual([key, true]);
          }
          const [[, del], [, pttl]] = (await obs.multi().hget(q.keys.byName.meta, 'del').pttl(q.keys.byName.meta).exec())! as Array<[unknown, unknown]>;
          if (pttl === -2) expect(ttl).toBeLessThan(1000); // a short tombstone that is already gone
          else {
            expect(del).toBe('1');
            expect(pttl).toBeGreaterThanOrEqual(0);
            expect(pttl).toBeLessThanOrEqual(ttl);
          }
          expect(await q.getJob('x')).toBeNull();
          return 'ok';
        },
      };
    }),
  ],
  [
    'waitForResult / watch: ids and options (the id is checked first: a bad one writes nothing)',
    fuzzProperty(() => {
      const waitOpts = fc.oneof({ weight: 8, arbitrary: optionsArb({ timeoutMs: timerField(1) }) }, { weight: 1, arbitrary: wrongType });
      const idArb = fc.oneof(
        // a job must exist to be waited for, and no job can have '.' or '..' as its id
        { weight: 4, arbitrary: nastyString.filter(validNewJobId) },
        { weight: 2, arbitrary: nastyString.filter((s) => validNewJobId(s) || !validJobId(s)) },
        { weight: 1, arbitrary: wrongType },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      return {
        runs: 100,
        outcomes: ['ok', 'refused', 'watched'],
        inputs: [fc.constantFrom('waitForResult', 'watch'), idArb, waitOpts],
        run: async (op, id, opts) => {
          // a fresh Queue object: an event subscription (valid calls) outlives the call
          const q = new Queue<unknown, unknown>('waited', { connection: server.url, prefix: 'fz' });
          try {
            if (validJobId(id)) {
              await q.add('in', { jobId: id });
              const [l] = await q.lease();
              await q.ack(l!, { done: id });
            }
            const before = await snapshotAll();
            const what = op === 'watch' ? `watch(${safeShow(id)})` : `waitForResult(${safeShow(id)}, ${safeShow(opts)})`;
            if (op === 'watch') {
              // refused by watch() itself, before anything subscribes
              const out = await outcome(() => q.watch(id as string));
              if (!validJobId(id)) return expectRefused(out, before, what, ValidationError, 'id');
              const states = await lastValueFrom(expectOk(out, what).pipe(toArray()));
              expect(states).toEqual(['completed']);
              return 'watched';
            }
            const verdict: Verdict = validJobId(id) ? judge(opts, (o) => isOptionsObject(o) && onlyKeys(o, ['timeoutMs']) && opt(o.timeoutMs, (x) => isInt(x, 1, MAX_TIMER_MS))) : 'invalid';
            const out = await outcome(() => q.waitForResult(id as string, opts as any));
            if (mustRefuse(verdict, out.ok)) {
              return expectRefused(out, before, what, ValidationError, validJobId(id) ? undefined : 'id');
            }
            expect(expectOk(out, what)).toEqual({ done: id });
            return 'ok';
          } finally {
            await q.close();
          }
        },
      };
    }),
  ],
  [
    'Worker and BatchWorker: queues, options and handlers',
    fuzzProperty(async () => {
      // a Queue object closed before the worker is made
      const closed = new Queue<unknown, unknown>('fuzz', { connection: server.url, prefix: 'fz' });
      await closed.close();
      /** What is passed as the queue: the open shared Queue, a closed one, or something that is no Queue. */
      const queues: Record<string, () => unknown> = {
        open: () => plain,
        closed: () => closed,
        null: () => null,
        undefined: () => undefined,
        object: () => ({}),
        name: () => 'fuzz',
        number: () => 1,
        // a Queue's own fields without its prototype, and a look-alike
        copy: () => ({ ...plain }),
        lookalike: () => ({ name: 'fuzz', keys: plain.keys, isClosed: false, client: plain.client, leaseStep: () => Promise.resolve(undefined) }),
      };
      const queueArb = fc.oneof(
        { weight: 12, arbitrary: fc.constant('open') },
        { weight: 2, arbitrary: fc.constant('closed') },
        { weight: 3, arbitrary: fc.constantFrom(...Object.keys(queues).filter((k) => k !== 'open' && k !== 'closed')) },
      );
      const flag = field(fc.boolean(), boolish);
      const workerOpts = optionsArb({
        concurrency: field(intIn(1, 64), numberish),
        leaseMs: field(intIn(MIN_LEASE_MS, MAX_MS), numberish),
        blockMs: timerField(10),
        heartbeat: flag,
        drainTimeoutMs: timerField(0),
        autostart: flag,
        size: fc.oneof(intIn(1, 1000), numberish, fc.constant(undefined)), // required by BatchWorker, unknown to Worker
        waitMs: timerField(0),
      });
      const handlerArb = fc.oneof({ weight: 6, arbitrary: fc.constant(async () => 'ok') }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, 'handler', 1, {}, []) });
      return {
        runs: 300,
        outcomes: ['ok', 'worked', 'refused', 'notQueue', 'closedQueue'],
        mustSee: ['ok', 'refused', 'notQueue', 'closedQueue'],
        inputs: [fc.constantFrom('Worker', 'BatchWorker'), queueArb, workerOpts, handlerArb],
        run: async (kind, queueKind, opts, handler) => {
          const before = await snapshotAll();
          const queue = queues[queueKind]!();
          const common = (o: Record<string, unknown>) =>
            opt(o.leaseMs, (x) => isInt(x, MIN_LEASE_MS, MAX_MS)) &&
            opt(o.blockMs, (x) => isInt(x, 10, MAX_TIMER_MS)) &&
            opt(o.drainTimeoutMs, (x) => isInt(x, 0, MAX_TIMER_MS)) &&
            opt(o.heartbeat, isBool) &&
            opt(o.autostart, isBool);
          const verdict: Verdict =
            typeof handler !== 'function'
              ? 'invalid'
              : judge(opts, (o: Record<string, unknown>) =>
                  kind === 'Worker'
                    ? common(o) && onlyKeys(o, ['concurrency', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart']) && opt(o.concurrency, (x) => isInt(x, 1, 1000))
                    : common(o) &&
                      onlyKeys(o, ['size', 'concurrency', 'waitMs', 'leaseMs', 'blockMs', 'heartbeat', 'drainTimeoutMs', 'autostart']) &&
                      isInt(o.size, 1, 1000) &&
                      opt(o.concurrency, (x) => isInt(x, 1, 64)) &&
                      opt(o.waitMs, (x) => isInt(x, 0, MAX_TIMER_MS)),
                );
          const o = loose(opts);
          let w: Worker<unknown, unknown> | BatchWorker<unknown, unknown> | undefined;
          let error: unknown;
          try {
            w = kind === 'Worker' ? new Worker(queue as any, handler as any, opts as any) : new BatchWorker(queue as any, handler as any, opts as any);
          } catch (e) {
            error = e;
          }
          const what = `new ${kind}(${queueKind} queue, ${typeof handler === 'function' ? 'handler' : safeShow(handler)}, ${safeShow(opts)})`;
          try {
            const outcomeOf: Outcome<unknown> = w ? { ok: true, value: 'a worker' } : { ok: false, error };
            if (queueKind === 'closed') {
              // ClosedError (a RelqError); with other faults as well, any of them may be named first
              await expectRefused(outcomeOf, before, what, verdict === 'valid' ? ClosedError : RelqError);
              return 'closedQueue';
            }
            if (queueKind !== 'open') {
              await expectRefused(outcomeOf, before, what, ValidationError, verdict === 'valid' ? 'queue' : undefined);
              return 'notQueue';
            }
            if (mustRefuse(verdict, w !== undefined)) {
              return expectRefused(outcomeOf, before, what);
            }
            if (!w) throw new Error(`${what}: expected a worker, got ${describeError(error)}`);
            expect(w.isRunning).toBe((o.autostart as boolean | undefined) ?? true);
            expect(w.leaseMs).toBe((o.leaseMs as number | undefined) ?? 30_000);
            if (w instanceof Worker) expect(w.concurrency).toBe((o.concurrency as number | undefined) ?? 1);
            else expect(w.size).toBe(o.size);
            // an idle worker on an empty queue writes nothing but its own entry among the live
            // workers (getWorkers), which its close removes
            const idle = await snapshotAll();
            const registry = Object.keys(idle).filter((k) => /:(workers|workerinfo)$/.test(k) && !(k in before));
            for (const k of registry) delete idle[k];
            expect(idle).toEqual(before);
            if (registry.length > 0 && !(w instanceof Worker && w.isRunning)) {
              await w.close({ drainTimeoutMs: 0 });
              expect(await snapshotAll()).toEqual(before);
            }
            if (w instanceof Worker && w.isRunning) {
              // ...and a running one does its work
              const { id } = await plain.add('work');
              const deadline = Date.now() + 10_000;
              while ((await plain.getJob(id))?.state !== 'completed') {
                if (Date.now() > deadline) throw new Error(`${what}: the job was not completed within 10 s`);
                await new Promise((r) => setTimeout(r, 5));
              }
              expect((await plain.getJob(id))?.result).toBe('ok');
              return ['ok', 'worked'];
            }
            return 'ok';
          } finally {
            await w?.close({ drainTimeoutMs: 0 });
          }
        },
      };
    }),
  ],
];

describe(PROPERTIES, () => {
  for (const [title, check] of FUZZ_PROPERTIES) test(title, check);

  test('afterwards: no prototype pollution and no connection left open by a refused call', async () => {
    // eslint-disable-next-line no-console
    console.log(`fuzz outcomes per property:\n${Object.entries(tally).map(([k, v]) => `  ${k.replace(`${PROPERTIES} `, '')}: ${JSON.stringify(v)}`).join('\n')}`);
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).jobId).toBeUndefined();
    // open now: the observer and one connection per shared queue (every other Queue,
    // Worker, blocker and subscriber of the properties was closed, or never opened)
    const expected = 1 + opened.length;
    const deadline = Date.now() + 5000;
    let clients: string[] = [];
    for (;;) {
      clients = String(await obs.client('LIST')).trim().split('\n');
      if (clients.length <= expected || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect({ open: clients.length, clients }).toEqual({ open: expected, clients: expect.any(Array) });
  });
});

// ---- pinned examples -------------------------------------------------------------------------
// Minimal examples of guarantees the properties above rely on (each was once broken).

const MS_PENDING = 300;
/** `{ settled: value or error text }` once `p` settles, or 'waiting' if it has not within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<{ settled: unknown } | 'waiting'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then((v) => ({ settled: v as unknown }), (e: unknown) => ({ settled: describeError(e) })),
    new Promise<'waiting'>((r) => (timer = setTimeout(() => r('waiting'), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `cond` every 5 ms, up to 10 s. */
async function eventually(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Clients blocked in a blocking command right now (CLIENT LIST flag `b`). */
async function blockedClients(): Promise<number> {
  return String(await obs.client('LIST')).split('\n').filter((l) => /\bflags=[^ ]*b/.test(l)).length;
}

/**
 * Every timer-backed wait, given 2^31 - 1 ms, really waits (a Node timer beyond its limit
 * would fire after 1 ms): waitForResult timeoutMs, Worker drainTimeoutMs and blockMs,
 * BatchWorker waitMs, lease blockMs, add / addBulk waitMs on a full bounded queue, and
 * exclusive.waitMs (with a role held for ttlMs 2^31 - 1).
 */
async function waitsForReal(ms: number): Promise<void> {
  await reset();
  const q = new Queue<unknown, unknown>('timers', { connection: server.url, prefix: 'fz' });
  const closers: Array<() => Promise<unknown>> = [() => q.close()];
  try {
    // waitForResult waits for a job that is not done yet
    const { id } = await q.add('later');
    const waiting = q.waitForResult(id, { timeoutMs: ms });
    expect(await within(waiting, MS_PENDING)).toBe('waiting');
    const [l] = await q.lease();
    await q.ack(l!, 'done');
    expect(await within(waiting, 5000)).toEqual({ settled: 'done' });

    // close() lets a running handler finish within drainTimeoutMs
    let finished = false;
    const drained = new Worker<unknown, unknown>(
      q,
      async () => {
        await new Promise((r) => setTimeout(r, MS_PENDING));
        finished = true;
      },
      { drainTimeoutMs: ms, blockMs: 100 },
    );
    const job = await q.add('drained');
    await eventually(async () => (await q.getJob(job.id))?.state === 'working', 'the job leased');
    await drained.close();
    expect({ finished, state: (await q.getJob(job.id))?.state }).toEqual({ finished: true, state: 'completed' });

    // an idle Worker blocks for blockMs without errors, and is woken by a new job
    const errors: unknown[] = [];
    const done: unknown[] = [];
    const idle = new Worker<unknown, unknown>(q, async (j) => void done.push(j.data), { blockMs: ms });
    closers.push(() => idle.close({ drainTimeoutMs: 0 }));
    idle.events.subscribe((e) => e.type === 'error' && errors.push(e.error));
    await new Promise((r) => setTimeout(r, MS_PENDING));
    await q.add('wakes the worker');
    await eventually(() => done.length === 1, 'the idle worker ran the job');
    await idle.close({ drainTimeoutMs: 0 });
    expect({ errors, done }).toEqual({ errors: [], done: ['wakes the worker'] });

    // a BatchWorker waits waitMs for its batch to fill
    const batches: unknown[][] = [];
    const batcher = new BatchWorker<unknown, unknown>(q, async (jobs) => void batches.push(jobs.map((j) => j.data)), { size: 2, waitMs: ms, blockMs: 100 });
    closers.push(() => batcher.close({ drainTimeoutMs: 0 }));
    await q.add('first');
    await new Promise((r) => setTimeout(r, MS_PENDING));
    expect(batches).toEqual([]);
    await q.add('second');
    await eventually(() => batches.length === 1, 'the batch of two ran');
    expect(batches).toEqual([['first', 'second']]);
    await batcher.close({ drainTimeoutMs: 0 });

    // a blocking lease on an empty queue waits until a job arrives
    const leasing = q.lease({ blockMs: ms });
    expect(await within(leasing, MS_PENDING)).toBe('waiting');
    await q.add('arrives');
    const got = await within(leasing, 5000);
    expect(got).not.toBe('waiting');
    expect((got as { settled: Array<Lease<unknown>> }).settled.map((x) => x.job.data)).toEqual(['arrives']);

    // add / addBulk on a full bounded queue wait waitMs for room
    const bounded = new Queue<unknown, unknown>('timers-bounded', { connection: server.url, prefix: 'fz', bound: 1 });
    closers.push(() => bounded.close());
    await bounded.add('fills it');
    const adding = bounded.add('waits', { waitMs: ms });
    const addingBulk = bounded.addBulk([{ data: 'waits too' }], { waitMs: ms });
    expect(await within(adding, MS_PENDING)).toBe('waiting');
    expect(await within(addingBulk, 1)).toBe('waiting');
    for (let n = 0; n < 2; n++) {
      const [room] = await bounded.lease({ blockMs: 5000 });
      await bounded.ack(room!);
    }
    expect(await within(adding, 5000)).toEqual({ settled: { id: expect.any(String), created: true } });
    expect(await within(addingBulk, 5000)).toEqual({ settled: [{ id: expect.any(String), created: true }] });

    // exclusive.waitMs: a second producer waits for the role (held for ttlMs)
    const holder = new Queue<unknown, unknown>('timers-exclusive', { connection: server.url, prefix: 'fz', exclusive: { producer: true, ttlMs: ms } });
    const waiter = new Queue<unknown, unknown>('timers-exclusive', { connection: server.url, prefix: 'fz', exclusive: { producer: true, waitMs: ms } });
    closers.push(() => holder.close(), () => waiter.close());
    await holder.add('holds the role');
    const queued = waiter.add('waits for the role');
    expect(await within(queued, MS_PENDING)).toBe('waiting');
    await holder.close();
    expect(await within(queued, 5000)).toEqual({ settled: { id: expect.any(String), created: true } });
  } finally {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  }
}

describe('pinned examples', () => {
  test('remove of a leased job without force: JobLeasedError; changePriority of a grouped job: ValidationError; nothing written', async () => {
    await reset();
    const lease = await leasedJob({ jobId: 'held' });
    await plain.add('g', { jobId: 'g:1', group: 'grp' });
    const before = await snapshotAll();
    await expectRefused(await outcome(() => plain.remove('held')), before, "remove('held')", JobLeasedError);
    await expectRefused(await outcome(() => plain.remove('held', { force: false })), before, "remove('held', { force: false })", JobLeasedError);
    await expectRefused(await outcome(() => plain.changePriority('g:1', 5)), before, "changePriority('g:1', 5)", ValidationError, 'priority');
    await expectRefused(await outcome(() => plain.changePriority('g:1', 0)), before, "changePriority('g:1', 0)", ValidationError, 'priority');
    expect(await plain.remove('held', { force: true })).toBe(true);
    expect(await plain.ack(lease, 'late')).toBe(false);
    await checkStructure(plain, 'after a forced remove');
  });

  test('ack / nack / requeue / reject / touch / ackBatch with something that is not a lease: ValidationError naming it, nothing written', async () => {
    const lease = await leasedJob();
    const cases: Array<[string, () => unknown, string]> = [
      ['ack(null)', () => plain.ack(null as any), 'lease'],
      ['ack({})', () => plain.ack({} as any), 'lease'],
      ['nack(undefined)', () => plain.nack(undefined as any), 'lease'],
      ['requeue({ job: {} })', () => plain.requeue({ job: {} } as any), 'lease'],
      ['reject("lease")', () => plain.reject('lease' as any), 'lease'],
      ['touch(42)', () => plain.touch(42 as any), 'lease'],
      ['ack(lease without token)', () => plain.ack({ job: { id: lease.job.id } } as any), 'lease'],
      ['ackBatch([null])', () => plain.ackBatch([null as any]), 'leases[0]'],
      ['ackBatch([lease, { lease: {} }])', () => plain.ackBatch([lease, { lease: {} as any }]), 'leases[1].lease'],
      ['ackBatch(null)', () => plain.ackBatch(null as any), 'leases'],
      ['ackBatch(lease)', () => plain.ackBatch(lease as any), 'leases'],
    ];
    for (const [what, call, field] of cases) {
      const before = await snapshotAll();
      await expectRefused(await outcome(call), before, what, ValidationError, field);
    }
    expect((await plain.getJob(lease.job.id))?.state).toBe('working');
  });

  test('payloads with no JSON (undefined, toJSON() giving undefined or a BigInt, or throwing) or nested deeper than 1000 levels: ValidationError naming the path', async () => {
    await reset();
    const cases: Array<[string, unknown, string]> = [
      ['undefined', undefined, 'data'],
      ['toJSON() → undefined', { toJSON: () => undefined }, 'data'],
      ['toJSON() → BigInt', { toJSON: () => 1n }, 'data'],
      ['toJSON() throws', { toJSON: () => { throw new Error('no'); } }, 'data'],
      ['a nested toJSON() → BigInt', { a: [{ toJSON: () => 1n }] }, 'data'],
      ['1001 levels of arrays', deepArray(MAX_DEPTH + 1), `data${'[0]'.repeat(MAX_DEPTH)}`],
      ['100 000 levels of arrays', labelled(deepArray(100_000) as object, 'deepArray(100_000)'), `data${'[0]'.repeat(MAX_DEPTH)}`],
      ['1001 levels, objects and arrays', deep(MAX_DEPTH + 1), `data${'.d[0]'.repeat(MAX_DEPTH / 2)}`],
      ['a function field (not left out)', { f: () => 1 }, 'data.f'],
      ['a symbol item (not made null)', [Symbol('s')], 'data[0]'],
    ];
    for (const [what, data, field] of cases) {
      const before = await snapshotAll();
      await expectRefused(await outcome(() => plain.add(data)), before, `add(${what})`, ValidationError, (f) => f === field || (field === 'data' && under('data')(f)));
      await expectRefused(await outcome(() => plain.addBulk([{ data }])), before, `addBulk(${what})`, ValidationError, (f) => under('jobs[0].data')(f));
    }
    // 1000 levels are fine
    const { id } = await plain.add(deepArray(MAX_DEPTH));
    expect(JSON.stringify((await plain.getJob(id))?.data)).toBe(JSON.stringify(deepArray(MAX_DEPTH)));
    // ack results too
    const lease = await leasedJob();
    for (const result of [{ toJSON: () => undefined }, { toJSON: () => 2n }, deepArray(MAX_DEPTH + 1)]) {
      const before = await snapshotAll();
      await expectRefused(await outcome(() => plain.ack(lease, result)), before, `ack(${safeShow(result)})`, ValidationError, under('result'));
    }
    expect(await plain.ack(lease, deepArray(MAX_DEPTH))).toBe(true);
  });

  test('payloads follow JSON.stringify for undefined: object fields left out, array items and holes null (job data and ack results)', async () => {
    await reset();
    const cases: unknown[] = [
      // eslint-disable-next-line no-sparse-arrays
      [1, , 3],
      new Array(2),
      [undefined],
      { u: undefined, v: 1 },
      { a: { toJSON: () => undefined }, b: [{ toJSON: () => undefined }] },
      { nested: { list: [undefined, { x: undefined }] } },
    ];
    for (const data of cases) {
      const expected = JSON.parse(JSON.stringify(data)) as unknown;
      const { id } = await plain.add(data);
      const info = await plain.getJob(id);
      expect({ data: info?.data, text: JSON.stringify(info?.data) }).toEqual({ data: expected, text: JSON.stringify(data) });
      const [lease] = await plain.lease({ count: 1000 });
      expect(lease?.job.data).toEqual(expected);
      expect(await plain.ack(lease!, data)).toBe(true);
      expect(JSON.stringify((await plain.getJob(id))?.result)).toBe(JSON.stringify(data));
    }
    expect(JSON.stringify((await plain.getJob((await plain.add([1, , 3])).id))?.data)).toBe('[1,null,3]'); // eslint-disable-line no-sparse-arrays
  });

  test('waitForResult and watch check the id first: ValidationError, nothing written (no listeners key)', async () => {
    const q = new Queue<unknown, unknown>('waited', { connection: server.url, prefix: 'fz' });
    try {
      await reset();
      for (const id of ['', 'a\u0000b', '\ud800', 'x'.repeat(257), 5, null, undefined]) {
        const before = await snapshotAll();
        await expectRefused(await outcome(() => q.waitForResult(id as string, { timeoutMs: 100 })), before, `waitForResult(${safeShow(id)})`, ValidationError, 'id');
        // even with options that are wrong as well: the id is named
        await expectRefused(await outcome(() => q.waitForResult(id as string, { timeoutMs: 2 ** 31 })), before, `waitForResult(${safeShow(id)}, 2^31)`, ValidationError, 'id');
        await expectRefused(await outcome(() => q.watch(id as string)), before, `watch(${safeShow(id)})`, ValidationError, 'id');
      }
      expect(await obs.exists(q.keys.byName.listeners)).toBe(0);
    } finally {
      await q.close();
    }
  });

  test('nack / reject with an error value that has neither JSON nor a prototype: the text falls back to String() or Object.prototype.toString (also from a Worker)', async () => {
    const [cyclic, big, badToString] = unprintables();
    const cases: Array<[unknown, string]> = [
      [cyclic, '[object Object]'],
      [big, '[object Object]'],
      [badToString, '[object Object]'],
      [{ n: 1n, toString: () => 'big one' }, 'big one'],
      [Symbol('s'), 'Symbol(s)'],
      [() => 1, '() => 1'],
    ];
    for (const [error, text] of cases) {
      await reset();
      const lease = await leasedJob({ attempts: 2 });
      expect(await outcome(() => plain.nack(lease, { error, delayMs: 0 }))).toEqual({ ok: true, value: true });
      expect((await plain.getJob(lease.job.id))?.lastError).toBe(text);
      const [again] = await plain.lease();
      expect(await outcome(() => plain.reject(again!, error))).toEqual({ ok: true, value: true });
      expect((await plain.getJob(lease.job.id))).toEqual(expect.objectContaining({ state: 'dead', lastError: text }));
    }
    // a handler throwing one: the job fails like any other (retried, then dead), the worker goes on
    await reset();
    const { id } = await plain.add('throws', { attempts: 2, backoff: 0 });
    const w = new Worker<unknown, unknown>(plain, async () => {
      throw cyclic;
    }, { blockMs: 50 });
    const errors: unknown[] = [];
    w.events.subscribe((e) => e.type === 'error' && errors.push(e.error));
    try {
      await eventually(async () => (await plain.getJob(id))?.state === 'dead', 'the job dead-lettered');
      expect(await plain.getJob(id)).toEqual(expect.objectContaining({ failures: 2, lastError: '[object Object]' }));
      expect(w.inFlight).toBe(0);
      const next = await plain.add('next', { attempts: 1 });
      await eventually(async () => (await plain.getJob(next.id))?.state === 'dead', 'the next job handled too');
      expect(errors).toEqual([]);
    } finally {
      await w.close({ drainTimeoutMs: 0 });
    }
  });

  test('Worker / BatchWorker: heartbeat and autostart must be booleans', async () => {
    await reset();
    for (const opts of [{ heartbeat: 'no' }, { heartbeat: 0 }, { autostart: 'false' }, { autostart: 0 }, { autostart: null }]) {
      const field = Object.keys(opts)[0]!;
      const makers: Array<() => Worker<unknown, unknown> | BatchWorker<unknown, unknown>> = [
        () => new Worker(plain, async () => 1, { blockMs: 50, ...(opts as object) }),
        () => new BatchWorker(plain, async () => undefined, { size: 1, blockMs: 50, ...(opts as object) }),
      ];
      for (const make of makers) {
        const before = await snapshotAll();
        const out = await outcome(make);
        if (out.ok) await out.value.close({ drainTimeoutMs: 0 });
        await expectRefused(out, before, `worker with ${safeShow(opts)}`, ValidationError, field);
      }
    }
    const w = new Worker(plain, async () => 1, { blockMs: 50, heartbeat: false, autostart: false });
    expect(w.isRunning).toBe(false);
    await w.close();
  });

  test('Worker / BatchWorker need an open relq Queue; a Queue closed under a running worker stops it (a "stopped" event, no error loop)', async () => {
    await reset();
    const closed = new Queue<unknown, unknown>('closed', { connection: server.url, prefix: 'fz' });
    await closed.close();
    for (const [queue, kind, field] of [
      [null, ValidationError, 'queue'],
      [{}, ValidationError, 'queue'],
      ['fuzz', ValidationError, 'queue'],
      [{ ...plain }, ValidationError, 'queue'],
      [Object.create(Queue.prototype), ValidationError, 'queue'], // passes instanceof, never constructed
      [closed, ClosedError, undefined],
    ] as const) {
      const makers: Array<() => Worker<unknown, unknown> | BatchWorker<unknown, unknown>> = [
        () => new Worker<unknown, unknown>(queue as any, async () => 1, { blockMs: 50 }),
        () => new BatchWorker<unknown, unknown>(queue as any, async () => undefined, { size: 1, blockMs: 50 }),
      ];
      for (const make of makers) {
        const before = await snapshotAll();
        const out = await outcome(make);
        if (out.ok) await out.value.close({ drainTimeoutMs: 0 });
        await expectRefused(out, before, `worker on ${safeShow(queue)}`, kind, field);
      }
    }
    // closed under running workers: each stops by itself
    for (const kind of ['Worker', 'BatchWorker'] as const) {
      const q = new Queue<unknown, unknown>('closing', { connection: server.url, prefix: 'fz' });
      const w =
        kind === 'Worker'
          ? new Worker<unknown, unknown>(q, async () => 1, { blockMs: 100 })
          : new BatchWorker<unknown, unknown>(q, async () => undefined, { size: 2, blockMs: 100 });
      const events: string[] = [];
      w.events.subscribe((e) => events.push(e.type === 'stopped' ? `stopped: ${e.reason}` : e.type));
      try {
        await q.add('one');
        await eventually(() => events.includes('completed'), `${kind}: the first job done`);
        await eventually(async () => (await blockedClients()) === 1, `${kind}: waiting on the empty queue`);
        await q.close();
        await eventually(() => !w.isRunning, `${kind} stopped`);
        // its shutdown is over: whatever it reported, it has reported (no error loop afterwards)
        expect(await within(w.close({ drainTimeoutMs: 0 }), 10_000)).toEqual({ settled: undefined });
        // its job's outcome and the loop's 'drained' on the emptied queue aside
        expect({ kind, events: events.filter((e) => e !== 'completed' && e !== 'drained') }).toEqual({ kind, events: ['stopped: queue object closed'] });
      } finally {
        await w.close({ drainTimeoutMs: 0 }).catch(() => undefined);
        await q.close();
      }
    }
  });

  test('requeue: the reason must be a string; a long one is cut like an error text', async () => {
    await reset();
    // (null, like other optional options' null, may be taken as absent: see `judge`)
    for (const reason of [Symbol('s'), { r: 1 }, 5, true, ['r']]) {
      const lease = await leasedJob();
      const before = await snapshotAll();
      await expectRefused(await outcome(() => plain.requeue(lease, { reason: reason as any })), before, `requeue reason ${String(reason)}`, ValidationError, 'reason');
      await plain.reject(lease);
    }
    // the reason travels in the 'retried' event, cut at 4096 characters
    await reset();
    const q = new Queue<unknown, unknown>('requeued', { connection: server.url, prefix: 'fz' });
    try {
      const reasons: unknown[] = [];
      const sub = q.events().subscribe((e) => e.type === 'retried' && reasons.push(e.reason));
      await eventually(async () => (await obs.exists(q.keys.byName.listeners)) === 1, 'the listener announced');
      await q.add('x');
      for (const reason of ['short', 'y'.repeat(MAX_ERROR_TEXT), 'z'.repeat(MAX_ERROR_TEXT * 3)]) {
        const [lease] = await q.lease();
        expect(await q.requeue(lease!, { reason })).toBe(true);
      }
      await eventually(() => reasons.length === 3, 'three retried events');
      sub.unsubscribe();
      expect(reasons).toEqual(['short', 'y'.repeat(MAX_ERROR_TEXT), `${'z'.repeat(MAX_ERROR_TEXT)}…`]);
    } finally {
      await q.close();
    }
  });

  test('every wait option takes up to 2^31 - 1 ms and refuses 2^31 (groupConcurrency and tombstoneMs, which are no timers, take 2^31)', async () => {
    await reset();
    const h = async () => undefined;
    const over = 2 ** 31;
    const refused: Array<[string, () => unknown, string]> = [
      ['lease blockMs', () => plain.lease({ blockMs: over }), 'blockMs'],
      ['add waitMs', () => plain.add('x', { waitMs: over }), 'opts.waitMs'],
      ['add timeoutMs', () => plain.add('x', { timeoutMs: over }), 'opts.timeoutMs'],
      ['addBulk job waitMs', () => plain.addBulk([{ data: 'x', opts: { waitMs: over } }]), 'jobs[0].opts.waitMs'],
      ['addBulk waitMs', () => plain.addBulk([{ data: 'x' }], { waitMs: over }), 'waitMs'],
      ['waitForResult timeoutMs', () => plain.waitForResult('x', { timeoutMs: over }), 'timeoutMs'],
      ['Worker blockMs', () => new Worker(plain, h, { blockMs: over }), 'blockMs'],
      ['Worker drainTimeoutMs', () => new Worker(plain, h, { drainTimeoutMs: over }), 'drainTimeoutMs'],
      ['BatchWorker blockMs', () => new BatchWorker(plain, h, { size: 1, blockMs: over }), 'blockMs'],
      ['BatchWorker drainTimeoutMs', () => new BatchWorker(plain, h, { size: 1, drainTimeoutMs: over }), 'drainTimeoutMs'],
      ['BatchWorker waitMs', () => new BatchWorker(plain, h, { size: 1, waitMs: over }), 'waitMs'],
      ['exclusive.waitMs', () => new Queue('x', { connection: server.url, prefix: 'fz', exclusive: { producer: true, waitMs: over } }), 'exclusive.waitMs'],
      ['exclusive.ttlMs', () => new Queue('x', { connection: server.url, prefix: 'fz', exclusive: { producer: true, ttlMs: over } }), 'exclusive.ttlMs'],
      ['groupConcurrency 2^31 + 1', () => new Queue('x', { connection: server.url, prefix: 'fz', groupConcurrency: over + 1 }), 'groupConcurrency'],
      ['tombstoneMs 2^31 + 1', () => plain.deleteQueue({ tombstoneMs: over + 1 }), 'tombstoneMs'],
    ];
    for (const [what, call, field] of refused) {
      const before = await snapshotAll();
      const out = await outcome(call);
      if (out.ok && typeof (out.value as { close?: unknown }).close === 'function') await (out.value as { close(o?: object): Promise<unknown> }).close({ drainTimeoutMs: 0 });
      await expectRefused(out, before, `${what}: 2^31`, ValidationError, field);
    }
    // 2^31 - 1 is taken by the constructors (the waits themselves: next test), 2^31 where no timer is involved
    const made = [
      new Worker(plain, h, { blockMs: MAX_TIMER_MS, drainTimeoutMs: MAX_TIMER_MS, autostart: false }),
      new BatchWorker(plain, h, { size: 1, blockMs: MAX_TIMER_MS, drainTimeoutMs: MAX_TIMER_MS, waitMs: MAX_TIMER_MS, autostart: false }),
      new Queue('x', { connection: server.url, prefix: 'fz', exclusive: { producer: true, waitMs: MAX_TIMER_MS, ttlMs: MAX_TIMER_MS } }),
      new Queue('x', { connection: server.url, prefix: 'fz', groupConcurrency: over }),
    ];
    for (const m of made) await m.close();
    const doomed = new Queue('doomed-2-31', { connection: server.url, prefix: 'fz' });
    try {
      await doomed.add('x');
      expect(await doomed.deleteQueue({ tombstoneMs: over })).toBeGreaterThan(0);
      const pttl = await obs.pttl(doomed.keys.byName.meta);
      expect(pttl).toBeGreaterThan(over - 60_000);
      expect(pttl).toBeLessThanOrEqual(over);
    } finally {
      await doomed.close();
    }
  });

  test('waits of 2^31 - 1 ms do wait (waitForResult, Worker drainTimeoutMs and blockMs, BatchWorker waitMs, lease blockMs, add / addBulk waitMs, exclusive.waitMs)', async () => {
    await waitsForReal(MAX_TIMER_MS);
  });

  test('a backoff jitter keeps its full precision after failures', async () => {
    await reset();
    for (const jitter of [1 / 3, 0.1 + 0.2, Number.MIN_VALUE, 1 - Number.EPSILON / 2]) {
      const lease = await leasedJob({ attempts: 5, backoff: { type: 'fixed', delayMs: 0, jitter } });
      expect(lease.job.policy.backoff).toEqual({ type: 'fixed', delayMs: 0, jitter });
      let current = lease;
      for (let failures = 1; failures <= 3; failures++) {
        expect(await plain.nack(current, { error: 'x' })).toBe(true);
        const [again] = await plain.lease();
        expect({ failures, backoff: again!.job.policy.backoff }).toEqual({ failures, backoff: { type: 'fixed', delayMs: 0, jitter } });
        current = again!;
      }
      await plain.reject(current);
    }
  });

  test('a subscription ended while it is being set up leaves no timer behind (the subscriber is disconnected once)', async () => {
    await reset();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await new Promise((r) => setTimeout(r, 50));
    const base = timers();
    const cycles = 5;
    for (let i = 0; i < cycles; i++) {
      const q = new Queue<unknown, unknown>('subscribed', { connection: server.url, prefix: 'fz' });
      try {
        // subscribed and unsubscribed before the subscriber connection is up: it is disconnected
        // while connecting, and its SSUBSCRIBE fails (a second disconnect would leave a 2 s timer)
        const sub = q.events().subscribe({ error: () => undefined });
        await new Promise((r) => setImmediate(r));
        sub.unsubscribe();
      } finally {
        await q.close();
      }
    }
    // Timers of the closes may still be running out; a leaked one lives 2 s, longer than this
    // wait (and than all the cycles took), so a leak still shows.
    const end = Date.now() + 500;
    while (timers() - base >= 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    // (one timer of slack for whatever else runs meanwhile; a leak leaves one per cycle)
    expect(timers() - base).toBeLessThan(2);
  });
});
