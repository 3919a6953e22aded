import { Observable, distinctUntilChanged, filter, firstValueFrom, take, timeout as rxTimeout } from 'rxjs';
import {
  assertConnection,
  closeClient,
  commandTimeoutOf,
  duplicateClient,
  openConnection,
  type ClientHandle,
  type RedisClient,
} from '../redis/connection.js';
import {
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PREFIX,
  DEFAULT_SWEEP_LIMIT,
  MAX_LEASE_COUNT,
  MAX_TIMER_MS,
} from '../defaults.js';
import {
  ClosedError,
  JobFailedError,
  NotReplicatedError,
  QueueDeletedError,
  TimeoutError,
  ValidationError,
} from '../errors.js';
import { EventHub } from './event-hub.js';
import { IdGenerator, newRequestId } from './ids.js';
import { plainRecordMaker, prepareJob, resolvePolicy } from './job-options.js';
import { queueKeys, type QueueKeys } from '../redis/keys.js';
import { QueueProbe } from './queue-probe.js';
import { wrapRedisError } from '../redis/redis-errors.js';
import { decodeRecord, encodeRecord, policyOf } from '../redis/record.js';
import { runScript, type ScriptName } from '../redis/scripts.js';
import { DEFAULT_TOMBSTONE_MS, EXT_OPTION_KEYS, QueueExt, type QueueState } from './queue-settings.js';
import type { ProduceItem } from './backpressure.js';
import { ackItem, appendSettleItems, assertLease, nackItem, POLICY_DEFAULTS_ARG, rejectItem, requeueItem, type SettleItem } from './settle-items.js';
import type {
  AddResult,
  BulkJob,
  DeadLetter,
  JobInfo,
  JobOptions,
  JobPolicy,
  JobState,
  Lease,
  LeasedJob,
  LeaseOptions,
  LeaseRef,
  QueueCounts,
  QueueEvent,
  QueueOptions,
  QueueStats,
  SweepResult,
} from '../types.js';
import { assertBoolean, assertFunction, assertInt, assertJobId, assertOptions, assertPrefix, assertQueueName, toJson } from '../validate.js';
import { assertDurability, waitForReplicas, type DurabilityOptions } from '../redis/replication.js';
import { assertEvictionCheck, checkEvictionPolicy, type EvictionCheck } from '../redis/server-check.js';
import { processWarning, type WarningHandler } from '../warnings.js';

const QUEUE_OPTION_KEYS = [
  'connection',
  'prefix',
  'defaults',
  'maxPayloadBytes',
  'events',
  'evictionCheck',
  'onWarning',
  'durability',
  ...EXT_OPTION_KEYS,
] as const;
/** Ghost ids are reported at most this often per queue (the count adds up meanwhile). */
const GHOST_WARNING_EVERY_MS = 10_000;
const LEASE_OPTION_KEYS = ['count', 'leaseMs', 'blockMs'] as const;
const TERMINAL: ReadonlySet<JobState | 'gone'> = new Set(['completed', 'dead', 'gone']);
// Margin after a blocking wait's own timeout before the socket is presumed dead.
const BLOCK_WATCHDOG_MS = 3000;

/** Result of one lease round trip (settles folded in). */
export interface LeaseStep<Data> {
  settled: boolean[];
  leases: Array<Lease<Data>>;
  /** Redis clock at the time of the call. */
  now: number;
  /** When the next delayed job becomes due, if known. */
  nextDue: number | undefined;
  paused: boolean;
  /** The queue is closed (closeQueue) and nothing is left unfinished: consumers should stop. */
  closed: boolean;
  /** The queue was deleted (deleteQueue). */
  deleted: boolean;
  /** Ids whose job record was gone (evicted or lost) that this call dropped from the queue. */
  ghosts: number;
  /** With `durability`: the settles of this call were applied, but not confirmed by enough replicas. */
  notReplicated?: NotReplicatedError<boolean[]>;
}

/** Queues this module constructed (an object made from Queue.prototype without the constructor is not one). */
const constructed = new WeakSet<object>();

/** A Queue that went through its constructor. @internal */
export function isQueue(value: unknown): value is Queue<unknown, unknown> {
  return typeof value === 'object' && value !== null && constructed.has(value);
}

/**
 * A named work queue on Redis: the producer and lease-level consumer API. Every
 * state change is one Lua script; leases are fenced by tokens; time is Redis's.
 */
export class Queue<Data = unknown, Result = unknown> {
  readonly name: string;
  readonly prefix: string;
  readonly keys: QueueKeys;
  readonly defaults: Readonly<JobPolicy>;
  private readonly plainRecord: (now: number, dataJson: string) => string;
  readonly maxPayloadBytes: number;
  private readonly handle: ClientHandle;
  private readonly eventsFlag: '0' | '1';
  private readonly probe: QueueProbe;
  private readonly ids = new IdGenerator();
  private readonly hub: EventHub;
  private readonly idleBlockers: RedisClient[] = [];
  private readonly allBlockers = new Set<RedisClient>();
  private closed = false;
  private readonly evictionCheck: EvictionCheck;
  private readonly warn: WarningHandler;
  private readonly durability: DurabilityOptions | undefined;
  /** The server check of the first call: pending, passed (true), or failed for good. */
  private serverChecked: Promise<void> | true | undefined;
  private ghostsUnreported = 0;
  private ghostWarnedAt = -Infinity;
  /** Bounded / fair / lifecycle / exclusive / stats (lib/core/queue/queue-settings.ts). */
  private readonly ext: QueueExt;

  constructor(name: string, options: QueueOptions = {}) {
    assertQueueName(name);
    assertOptions('queue options', options, QUEUE_OPTION_KEYS);
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    assertPrefix(prefix);
    if (options.maxPayloadBytes !== undefined) {
      assertInt('maxPayloadBytes', options.maxPayloadBytes, { min: 1, max: 512 * 1024 * 1024 });
    }
    this.name = name;
    this.prefix = prefix;
    this.keys = queueKeys(prefix, name);
    this.defaults = Object.freeze(resolvePolicy('defaults', options.defaults));
    this.plainRecord = plainRecordMaker(this.defaults);
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (options.events !== undefined) assertBoolean('events', options.events);
    assertConnection('connection', options.connection);
    assertEvictionCheck(options.evictionCheck);
    this.evictionCheck = options.evictionCheck ?? 'warn';
    if (options.onWarning !== undefined) assertFunction('onWarning', options.onWarning);
    this.warn = options.onWarning ?? processWarning;
    this.eventsFlag = options.events === false ? '0' : '1';
    // The extension validates its options: before anything connects.
    const queue = this;
    this.ext = new QueueExt(
      {
        name,
        keys: this.keys,
        eventsFlag: this.eventsFlag,
        run: (script, op, args) => this.run(script, op, args),
        openBlocker: () => this.openBlocker(),
        closeBlocker: (b) => this.closeBlocker(b),
        wrapError: (err, op) => wrapRedisError(err, op, this.handle),
        get isClosed() {
          return queue.closed;
        },
      },
      options,
    );
    assertDurability(options.durability, commandTimeoutOf(options.connection));
    this.durability = options.durability && { ...options.durability };
    this.handle = openConnection(options.connection);
    this.hub = new EventHub(
      this.handle,
      this.keys.byName.events,
      this.keys.byName.listeners,
      name,
      (err) => wrapRedisError(err, 'events', this.handle),
      (message) => this.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message }),
    );
    constructed.add(this);
    this.probe = new QueueProbe(this.handle.client, this.keys.byName.listeners, this.keys.byName.meta, () => this.hub.listening);
  }

  /** The shared command connection (for health checks and tests). */
  get client(): RedisClient {
    return this.handle.client;
  }

  // ---- producing -------------------------------------------------------------

  /** Adds one job. With a `jobId` that exists, nothing is written and `created` is false. */
  async add(data: Data, opts?: JobOptions): Promise<AddResult> {
    const [result] = await this.addMany([{ data, opts }], 'add');
    return this.replicated('add', result!);
  }

  /** Adds many jobs in one round trip and one atomic script. */
  addBulk(jobs: ReadonlyArray<BulkJob<Data>>, opts: { timeoutMs?: number } = {}): Promise<AddResult[]> {
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', 'addBulk expects an array of { data, opts }');
    assertOptions('addBulk options', opts, ['timeoutMs']);
    if (opts.timeoutMs !== undefined) assertInt('timeoutMs', opts.timeoutMs, { max: MAX_TIMER_MS });
    return this.addMany(jobs, 'addBulk', 'wait', opts.timeoutMs).then((r) => this.replicated('addBulk', r));
  }

  private async addMany(
    jobs: ReadonlyArray<BulkJob<Data>>,
    op: string,
    mode: 'wait' | 'try' = 'wait',
    timeoutMs?: number,
  ): Promise<AddResult[]> {
    this.assertOpen();
    if (jobs.length === 0) return [];
    const now = Date.now();
    const items: ProduceItem[] = [];
    let grouped = false;
    jobs.forEach((job, i) => {
      if (op === 'addBulk') assertOptions(`jobs[${i}]`, job, ['data', 'opts']);
      const dataJson = toJson(op === 'add' ? 'data' : `jobs[${i}].data`, job.data, this.maxPayloadBytes);
      if (job.opts === undefined) {
        // the common case: nothing to check, the meta is the queue's defaults
        items.push({ id: this.ids.next(), custom: 0, record: this.plainRecord(now, dataJson), priority: 0, due: '', group: '' });
        return;
      }
      const field = jobs.length === 1 && op === 'add' ? 'opts' : `jobs[${i}].opts`;
      const prepared = prepareJob(field, job.opts, this.defaults, now);
      const custom = prepared.id === undefined ? 0 : 1;
      const id = prepared.id ?? this.ids.next();
      items.push({ id, custom, record: encodeRecord(prepared.meta, dataJson), priority: prepared.priority, due: prepared.due, group: prepared.group });
      if (prepared.group !== '') grouped = true;
      if (job.opts.timeoutMs !== undefined) {
        // how long one call waits for room: a job's own value means something only for add()
        if (mode === 'try') throw new ValidationError(`${field}.timeoutMs`, `${op === 'add' ? 'tryAdd' : 'tryAddBulk'} never waits for room; use ${op} to wait`);
        if (op !== 'add') throw new ValidationError(`${field}.timeoutMs`, 'is an option of the whole call: addBulk(jobs, { timeoutMs })');
        timeoutMs = job.opts.timeoutMs;
      }
    });
    // Bounded / closable / grouped adds read the queue's state (produce.lua); plain adds stay
    // FCALL + HSETNX + RPUSH (add.lua), while this producer's fresh reading of the queue's
    // state finds nothing they would miss (lib/core/queue/queue-probe.ts).
    let created: number[];
    if (this.ext.managed || mode === 'try' || grouped || this.ext.addsWaiting || !this.probe.plainAdds(now)) {
      created = await this.ext.produce(items, mode, timeoutMs);
    } else {
      if (this.ext.hasSettings) await this.ext.configure(); // e.g. stats: false, once
      const events = this.eventsFlag === '1' && this.probe.listening() ? '1' : '0';
      const args: Array<string | number> = [events];
      // Jobs without options go as id and record only (add.lua); the others in full.
      if (items.every((it) => it.custom === 0 && it.priority === 0 && it.due === '')) {
        args.push(0, items.length);
        for (const it of items) args.push(it.id, it.record);
      } else {
        args.push(items.length);
        for (const it of items) args.push(it.id, it.custom, it.record, it.priority, it.due);
        args.push(0);
      }
      created = (await this.run('add', op, args)) as number[];
    }
    return items.map((it, i) => ({ id: it.id, created: created[i] === 1 }));
  }

  // ---- leasing ---------------------------------------------------------------

  /**
   * Leases up to `count` jobs. With nothing pending it waits up to `blockMs` on a
   * wake-up list (no polling) and returns as soon as a job arrives or comes due.
   */
  async lease(opts: LeaseOptions = {}): Promise<Array<Lease<Data>>> {
    this.assertOpen();
    assertOptions('lease options', opts, LEASE_OPTION_KEYS);
    const count = opts.count ?? 1;
    const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    const blockMs = opts.blockMs ?? 0;
    assertInt('count', count, { min: 1, max: MAX_LEASE_COUNT });
    assertInt('leaseMs', leaseMs, { min: 1, max: 2 ** 41 });
    assertInt('blockMs', blockMs, { max: MAX_TIMER_MS });
    const giveUpAt = Date.now() + blockMs;
    let woken = false;
    for (;;) {
      const step = await this.leaseStep([], count, leaseMs, woken);
      if (step.deleted) throw new QueueDeletedError(this.name);
      if (step.closed) return step.leases; // closed and drained: nothing will come
      const left = giveUpAt - Date.now();
      if (step.leases.length > 0 || left <= 0) return step.leases;
      const blocker = this.takeBlocker();
      try {
        woken = await this.waitForWork(blocker, waitFor(step, left));
      } finally {
        this.returnBlocker(blocker);
      }
    }
  }

  /**
   * Settles `items` and leases up to `count` more in one script call: the worker's
   * hot path. `woken` says the caller just consumed a wake-up token.
   * @internal
   */
  async leaseStep(
    items: SettleItem[],
    count: number,
    leaseMs: number,
    woken: boolean,
    reqId = newRequestId(),
  ): Promise<LeaseStep<Data>> {
    if (this.ext.prepareLease) await this.ext.beforeLease();
    const args: Array<string | number> = [this.eventsFlag, reqId, count, leaseMs, woken ? 1 : 0, DEFAULT_SWEEP_LIMIT, POLICY_DEFAULTS_ARG];
    const decodeSettled = appendSettleItems(args, items);
    const [settled, head] = (await this.run('lease', 'lease', args, [this.keys.request(reqId)])) as [
      number[],
      Array<string | number>,
    ];
    const now = Number(head[0]);
    const nextDue = Number(head[1]);
    const leases: Array<Lease<Data>> = [];
    for (let i = 4; i < head.length; i += 4) {
      leases.push({
        job: this.toLeasedJob(String(head[i]), String(head[i + 3]), now),
        token: String(head[i + 1]),
        deadline: Number(head[i + 2]),
        leaseMs: Number(head[i + 2]) - now,
      });
    }
    const step: LeaseStep<Data> = {
      settled: decodeSettled(settled),
      leases,
      now,
      nextDue: nextDue >= 0 ? nextDue : undefined,
      paused: head[2] === 1,
      closed: head[2] === 2,
      deleted: head[2] === 3,
      ghosts: Number(head[3]),
    };
    if (step.ghosts > 0) this.reportGhosts(step.ghosts);
    if (this.durability && items.length > 0) {
      try {
        await this.replicated('settle', step.settled);
      } catch (err) {
        if (!(err instanceof NotReplicatedError)) throw err;
        step.notReplicated = err as NotReplicatedError<boolean[]>;
      }
    }
    return step;
  }

  /** Ghost ids are a sign of eviction: reported, a few at a time. */
  private reportGhosts(n: number): void {
    this.ghostsUnreported += n;
    const now = Date.now();
    if (now - this.ghostWarnedAt < GHOST_WARNING_EVERY_MS) return;
    this.ghostWarnedAt = now;
    const message =
      `queue '${this.name}': dropped ${this.ghostsUnreported} queued id(s) whose job record is gone (evicted, or deleted ` +
      "outside relq); counts().ghosts keeps the total. Check that Redis runs with maxmemory-policy noeviction (docs/reliability.md)";
    this.ghostsUnreported = 0;
    this.warn({ code: 'RELQ_GHOST_JOBS', queue: this.name, message });
  }

  /**
   * With `durability`: waits until enough replicas have this connection's writes (WAIT), and
   * throws NotReplicatedError carrying `result` when they do not confirm them in time.
   */
  private async replicated<T>(op: string, result: T): Promise<T> {
    if (!this.durability) return result;
    const { replicas, timeoutMs } = this.durability;
    let confirmed = 0;
    try {
      confirmed = await waitForReplicas(this.handle.client, this.keys.byName.jobs, replicas, timeoutMs);
    } catch {
      // applied, replication unknown: reported as not confirmed
    }
    if (confirmed < replicas) throw new NotReplicatedError(op, confirmed, replicas, result);
    return result;
  }

  private toLeasedJob(id: string, record: string, now: number): LeasedJob<Data> {
    const { meta, data } = decodeRecord<Data>(record);
    const job: { -readonly [K in keyof LeasedJob<Data>]: LeasedJob<Data>[K] } = {
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
    return job;
  }

  /**
   * Blocks on the wake-up list for up to `ms`. True when a token was taken. A reply
   * that never comes (half-open socket) is cut off and the connection replaced.
   * @internal
   */
  async waitForWork(blocker: RedisClient, ms: number): Promise<boolean> {
    const seconds = Math.max(0.01, ms / 1000).toFixed(3);
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<'stuck'>((resolve) => {
      timer = setTimeout(() => resolve('stuck'), Math.min(ms + BLOCK_WATCHDOG_MS, MAX_TIMER_MS));
    });
    try {
      const res = await Promise.race([blocker.blpop(this.keys.byName.wake, seconds), watchdog]);
      if (res === 'stuck') {
        blocker.disconnect(true);
        return true;
      }
      return res !== null;
    } catch (err) {
      if (this.closed) throw new ClosedError(`queue '${this.name}'`);
      throw wrapRedisError(err, 'lease', this.handle);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A dedicated connection for blocking waits. @internal */
  openBlocker(): RedisClient {
    const b = duplicateClient(this.handle);
    this.allBlockers.add(b);
    return b;
  }

  /** @internal */
  closeBlocker(b: RedisClient): void {
    // A second disconnect() would leave ioredis' disconnect timer running.
    if (!this.allBlockers.delete(b)) return;
    b.disconnect();
  }

  private takeBlocker(): RedisClient {
    return this.idleBlockers.pop() ?? this.openBlocker();
  }

  private returnBlocker(b: RedisClient): void {
    if (this.closed || b.status === 'end') this.closeBlocker(b);
    else this.idleBlockers.push(b);
  }

  // ---- settling --------------------------------------------------------------

  /** Completes the job. True exactly once per job; false for a stale or repeated lease. */
  async ack(lease: LeaseRef, result?: Result): Promise<boolean> {
    return this.settleOne(ackItem(lease, this.resultJson(result)));
  }

  /** Acks many leases in one round trip; returns which succeeded, in order. */
  async ackBatch(leases: ReadonlyArray<LeaseRef | { lease: LeaseRef; result?: Result }>): Promise<boolean[]> {
    if (!Array.isArray(leases)) throw new ValidationError('leases', 'ackBatch expects an array of leases or { lease, result }');
    const items = leases.map((l: unknown, i) => {
      if (typeof l === 'object' && l !== null && 'lease' in l) {
        const { lease, result } = l as { lease: LeaseRef; result?: Result };
        assertLease(lease, `leases[${i}].lease`);
        return ackItem(lease, this.resultJson(result));
      }
      assertLease(l, `leases[${i}]`);
      return ackItem(l, '');
    });
    return this.settle(items);
  }

  /** A failed attempt: retried after `delayMs` (default: the job's backoff) or dead-lettered. */
  async nack(lease: LeaseRef, opts: { error?: unknown; delayMs?: number } = {}): Promise<boolean> {
    assertOptions('nack options', opts, ['error', 'delayMs']);
    if (opts.delayMs !== undefined) assertInt('delayMs', opts.delayMs, { max: 2 ** 41 });
    return this.settleOne(nackItem(lease, opts.error, opts.delayMs));
  }

  /** Puts the job back without counting a failure. */
  async requeue(lease: LeaseRef, opts: { delayMs?: number; reason?: string } = {}): Promise<boolean> {
    assertOptions('requeue options', opts, ['delayMs', 'reason']);
    if (opts.delayMs !== undefined) assertInt('delayMs', opts.delayMs, { max: 2 ** 41 });
    return this.settleOne(requeueItem(lease, opts.delayMs ?? 0, opts.reason ?? 'requeued'));
  }

  /** Dead-letters the job now, with no further attempts. */
  async reject(lease: LeaseRef, reason: unknown = 'rejected'): Promise<boolean> {
    return this.settleOne(rejectItem(lease, reason));
  }

  /**
   * Settles any mix of outcomes in one script call. A retry of a call that failed passes the
   * same `reqId`: if the first try was applied, its answers come back (include/replay.lua).
   * @internal
   */
  async settle(items: SettleItem[], reqId = newRequestId()): Promise<boolean[]> {
    if (items.length === 0) return [];
    const args: Array<string | number> = [this.eventsFlag, POLICY_DEFAULTS_ARG];
    const decodeSettled = appendSettleItems(args, items);
    const settled = decodeSettled((await this.run('settle', 'settle', args, [this.keys.request(reqId)])) as number[]);
    return this.replicated('settle', settled);
  }

  /** One settle through the public API: its answer, or NotReplicatedError carrying it. */
  private async settleOne(item: SettleItem): Promise<boolean> {
    try {
      return (await this.settle([item]))[0]!;
    } catch (err) {
      if (err instanceof NotReplicatedError) throw new NotReplicatedError(err.op, err.replicas, err.required, (err.result as boolean[])[0]);
      throw err;
    }
  }

  /** Extends the lease by `extendMs` from now (default: its own lease length). False once lost. */
  async touch(lease: LeaseRef, extendMs?: number): Promise<boolean> {
    return (await this.touchMany([lease], extendMs))[0]!;
  }

  /** Heartbeat for many leases in one call; updates each lease's deadline. @internal */
  async touchMany(leases: ReadonlyArray<LeaseRef>, extendMs?: number): Promise<boolean[]> {
    this.assertOpen();
    if (extendMs !== undefined) assertInt('extendMs', extendMs, { min: 1, max: 2 ** 41 });
    leases.forEach((l, i) => assertLease(l, leases.length === 1 ? 'lease' : `leases[${i}]`));
    if (leases.length === 0) return [];
    const args: Array<string | number> = [leases.length];
    leases.forEach((l, i) => {
      const by = extendMs ?? l.leaseMs;
      if (typeof by !== 'number') throw new ValidationError(leases.length === 1 ? 'extendMs' : `leases[${i}]`, 'is needed for a lease without leaseMs (rebuilt from id and token)');
      args.push(l.job.id, l.token, by);
    });
    const out = (await this.run('touch', 'touch', args)) as number[];
    return out.map((deadline, i) => {
      if (deadline > 0) leases[i]!.deadline = deadline;
      return deadline > 0;
    });
  }

  private resultJson(result: Result | undefined): string {
    return result === undefined ? '' : toJson('result', result, this.maxPayloadBytes);
  }

  // ---- housekeeping ----------------------------------------------------------

  /**
   * One bounded pass: expired leases back to pending (a failed attempt; dead past the
   * limit), due delayed jobs promoted, ended retention and idempotency windows cleared.
   * Safe to run from many processes at once.
   */
  async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    assertOptions('sweep options', opts, ['limit']);
    const limit = opts.limit ?? DEFAULT_SWEEP_LIMIT;
    assertInt('limit', limit, { min: 1, max: 100_000 });
    const r = (await this.run('sweep', 'sweep', [this.eventsFlag, limit])) as number[];
    return { stalled: r[0]!, deadLettered: r[1]!, promoted: r[2]!, completedRemoved: r[3]!, dedupForgotten: r[4]! };
  }

  // ---- reading ---------------------------------------------------------------

  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    assertJobId(id, 'id');
    const r = (await this.run('getJob', 'getJob', [id])) as string[];
    if (r.length === 0) return null;
    const [state, record, score, result] = r as [JobState, string, string, string | undefined];
    const { meta, data } = decodeRecord<Data>(record);
    const failures = meta.f ?? 0;
    const requeues = meta.r ?? 0;
    const info: JobInfo<Data, Result> = {
      id,
      name: meta.n ?? '',
      state,
      data,
      priority: meta.p ?? 0,
      failures,
      maxAttempts: meta.a,
      dequeues: failures + requeues + (state === 'working' || state === 'completed' ? 1 : 0),
      requeues,
      createdAt: meta.t,
    };
    if (meta.e !== undefined) info.lastError = meta.e;
    if (meta.g !== undefined) info.group = meta.g;
    const at = Number(score);
    if (state === 'working' && score !== '') info.leaseDeadline = at;
    if (state === 'delayed') info.runAt = at;
    if (state === 'dead') info.diedAt = at;
    if (state === 'completed') {
      info.retainedUntil = at;
      if (result) {
        const stored = JSON.parse(result) as { at: number; r: Result | null };
        info.completedAt = stored.at;
        if (stored.r !== null) info.result = stored.r;
      }
    }
    return info;
  }

  async counts(): Promise<QueueCounts> {
    const r = (await this.run('counts', 'counts', [])) as number[];
    return { pending: r[0]!, working: r[1]!, delayed: r[2]!, completed: r[3]!, dead: r[4]!, paused: r[5] === 1, ghosts: r[6] ?? 0 };
  }

  /** Stops leasing on every worker of this queue; adds go on. */
  async pause(): Promise<void> {
    await this.run('pause', 'pause', [this.eventsFlag, 'pause']);
  }

  async resume(): Promise<void> {
    await this.run('pause', 'resume', [this.eventsFlag, 'resume']);
  }

  async isPaused(): Promise<boolean> {
    return (await this.counts()).paused;
  }

  // ---- dead letters ----------------------------------------------------------

  /** Dead-lettered jobs, oldest first. */
  async listDead(opts: { offset?: number; limit?: number } = {}): Promise<Array<DeadLetter<Data>>> {
    assertOptions('listDead options', opts, ['offset', 'limit']);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? 100;
    assertInt('offset', offset);
    assertInt('limit', limit, { min: 1, max: 10_000 });
    const r = (await this.run('deadLetters', 'listDead', [this.eventsFlag, 'list', offset, limit])) as string[];
    const out: Array<DeadLetter<Data>> = [];
    for (let i = 0; i < r.length; i += 3) {
      if (!r[i + 1]) continue;
      const { meta, data } = decodeRecord<Data>(r[i + 1]!);
      const dl: DeadLetter<Data> = { id: r[i]!, name: meta.n ?? '', data, failures: meta.f ?? 0, diedAt: Number(r[i + 2]) };
      if (meta.e !== undefined) dl.lastError = meta.e;
      out.push(dl);
    }
    return out;
  }

  /** Moves dead letters back to pending with a fresh attempt budget: the given ids, or the oldest `limit`. */
  retryDead(target: string[] | { limit: number }): Promise<string[]> {
    return this.deadOp('redrive', target);
  }

  /** Deletes dead letters for good: the given ids, or the oldest `limit`. */
  purgeDead(target: string[] | { limit: number }): Promise<string[]> {
    return this.deadOp('purge', target);
  }

  private async deadOp(op: 'redrive' | 'purge', target: string[] | { limit: number }): Promise<string[]> {
    let args: Array<string | number>;
    if (Array.isArray(target)) {
      target.forEach((id, i) => assertJobId(id, `ids[${i}]`));
      if (target.length === 0) return [];
      args = [this.eventsFlag, op, 'ids', 0, ...target];
    } else {
      assertOptions(`${op} target`, target, ['limit']);
      assertInt('limit', target.limit, { min: 1, max: 10_000 });
      args = [this.eventsFlag, op, 0, target.limit];
    }
    return (await this.run('deadLetters', op, args)) as string[];
  }

  // ---- events ----------------------------------------------------------------

  /** Job transitions of this queue from every process, as they happen. */
  events(): Observable<QueueEvent> {
    return this.hub.events$;
  }

  /** The states of one job, starting with its current one, until it completes, dies or vanishes. */
  watch(id: string): Observable<JobState | 'gone'> {
    assertJobId(id, 'id'); // before anything subscribes or announces a listener
    return new Observable<JobState | 'gone'>((subscriber) => {
      let done = false;
      const emit = (s: JobState | 'gone') => {
        if (done) return;
        subscriber.next(s);
        if (TERMINAL.has(s)) {
          done = true;
          subscriber.complete();
        }
      };
      const sub = this.hub.events$.pipe(filter((e) => e.id === id)).subscribe({
        next: (e) => {
          const s = stateAfter(e);
          if (s) emit(s);
        },
        error: (err: unknown) => subscriber.error(err),
        // The event stream ends only when this queue object is closed.
        complete: () => {
          if (!done) subscriber.error(new ClosedError(`queue '${this.name}'`));
        },
      });
      const readState = () =>
        this.getJob(id)
          .then((info) => emit(info ? info.state : 'gone'))
          .catch((err: unknown) => subscriber.error(err));
      const again = this.hub.resubscribed$.subscribe(() => void readState());
      this.hub
        .open()
        .then(readState, (err: unknown) => subscriber.error(err));
      return () => {
        sub.unsubscribe();
        again.unsubscribe();
      };
    }).pipe(distinctUntilChanged());
  }

  /** Resolves with the job's result once it completes (needs keepCompletedMs > 0). */
  async waitForResult(id: string, opts: { timeoutMs?: number } = {}): Promise<Result | undefined> {
    assertJobId(id, 'id');
    assertOptions('waitForResult options', opts, ['timeoutMs']);
    const timeoutMs = opts.timeoutMs ?? 30_000;
    assertInt('timeoutMs', timeoutMs, { min: 1, max: MAX_TIMER_MS });
    let end: JobState | 'gone';
    try {
      end = await firstValueFrom(
        this.watch(id).pipe(
          filter((s) => TERMINAL.has(s)),
          take(1),
          rxTimeout({ first: timeoutMs }),
        ),
      );
    } catch (err) {
      if (err instanceof Error && err.name === 'TimeoutError') {
        // An event lost during a reconnect must not turn a finished job into a timeout.
        const last = await this.getJob(id);
        if (last?.state === 'completed') return last.result;
        if (last?.state === 'dead') throw new JobFailedError(id, last.lastError ?? 'dead-lettered');
        throw new TimeoutError(`job ${id} did not finish within ${timeoutMs} ms`);
      }
      throw err;
    }
    const info = await this.getJob(id);
    if (end === 'completed' || info?.state === 'completed') return info?.result;
    if (info?.state === 'dead') throw new JobFailedError(id, info.lastError ?? 'dead-lettered');
    throw new JobFailedError(id, 'the job no longer exists (removed, or completed with keepCompletedMs 0)');
  }

  // ---- bounded queues, queue lifecycle, stats (docs/bounded-fair-batch.md) ---------

  /** Adds one job now or fails with QueueFullError when the (bounded) queue is full. Never waits. */
  async tryAdd(data: Data, opts?: JobOptions): Promise<AddResult> {
    const [result] = await this.addMany([{ data, opts }], 'add', 'try');
    return this.replicated('tryAdd', result!);
  }

  /** addBulk that fails at once with QueueFullError when the jobs do not all fit now. */
  tryAddBulk(jobs: ReadonlyArray<BulkJob<Data>>): Promise<AddResult[]> {
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', 'tryAddBulk expects an array of { data, opts }');
    return this.addMany(jobs, 'addBulk', 'try').then((r) => this.replicated('tryAddBulk', r));
  }

  /**
   * Closes the queue itself (in Redis, for every process), not this object's connections
   * (that is close()): adds fail with QueueClosedError, producers blocked on a full queue are
   * released with it, consumers finish what is left and then stop. False if already closed.
   */
  closeQueue(): Promise<boolean> {
    return this.ext.closeQueue();
  }

  /** Opens a closed queue again. False if it was open. */
  reopenQueue(): Promise<boolean> {
    return this.ext.reopenQueue();
  }

  /** Whether the queue was closed with closeQueue() (a Redis read; see also `isClosed`). */
  async isQueueClosed(): Promise<boolean> {
    return (await this.ext.state()).closed;
  }

  /** The queue's shared settings and state as stored in Redis. */
  queueState(): Promise<QueueState> {
    return this.ext.state();
  }

  /** Produced and consumed messages and bytes (counted while `stats` is on for the queue). */
  stats(): Promise<QueueStats> {
    return this.ext.stats();
  }

  /**
   * Removes every key of the queue. Blocked producers, consumers and role waiters fail with
   * QueueDeletedError; a short-lived tombstone (`tombstoneMs`, default 10 s) tells late
   * arrivals the same. Returns the number of keys removed.
   */
  async deleteQueue(opts: { tombstoneMs?: number } = {}): Promise<number> {
    assertOptions('deleteQueue options', opts, ['tombstoneMs']);
    const ttl = opts.tombstoneMs ?? DEFAULT_TOMBSTONE_MS;
    assertInt('tombstoneMs', ttl, { min: 1, max: 2 ** 31 });
    return this.ext.deleteQueue(ttl);
  }

  /** This process's identity in exclusive roles and waiter registrations. */
  get identity(): { host: string; pid: number; instance: string } {
    return { ...this.ext.identity };
  }

  // ---- lifecycle -------------------------------------------------------------

  /** Closes the connections relq opened; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.ext.shutdown(); // releases waiting adds (ClosedError) and exclusive roles
    this.closed = true;
    this.hub.close();
    for (const b of [...this.allBlockers]) this.closeBlocker(b);
    this.idleBlockers.length = 0;
    if (this.handle.owned) await closeClient(this.handle.client);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private assertOpen(): void {
    if (this.closed) throw new ClosedError(`queue '${this.name}'`);
  }

  private async run(script: ScriptName, op: string, args: Array<string | number>, extraKeys: string[] = []): Promise<unknown> {
    this.assertOpen();
    const keys = extraKeys.length ? [...this.keys.all, ...extraKeys] : this.keys.all;
    try {
      if (this.serverChecked !== true) await this.checkServer();
      const call = runScript(this.handle.client, script, keys, args);
      return await (this.handle.callDeadlineMs === undefined ? call : withDeadline(call, this.handle.callDeadlineMs));
    } catch (err) {
      throw wrapRedisError(err, op, this.handle);
    }
  }

  /** On first use: is the server safe for a queue (lib/core/redis/server-check.ts)? */
  private checkServer(): Promise<void> {
    this.serverChecked ??= checkEvictionPolicy(this.handle.client, this.name, this.evictionCheck, this.warn).then((done) => {
      // Not read yet (not connected, a node away): checked again by the next call.
      this.serverChecked = done ? true : undefined;
    });
    return this.serverChecked as Promise<void>;
  }
}

/**
 * `call`, or a failure once `ms` passed without a reply. The command may still run later:
 * settles and leases are replay-safe, and the caller hears it as a failed call.
 */
function withDeadline<T>(call: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Command timed out: no reply within ${ms} ms`)), ms);
  });
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}

/** How long to block: until the next delayed job is due, at most `left`. */
function waitFor(step: { now: number; nextDue: number | undefined }, left: number): number {
  if (step.nextDue === undefined) return left;
  return Math.min(left, Math.max(1, step.nextDue - step.now));
}

export { waitFor as blockDuration };

function stateAfter(e: QueueEvent): JobState | 'gone' | undefined {
  switch (e.type) {
    case 'added':
    case 'promoted':
    case 'stalled':
      return 'pending';
    case 'leased':
      return 'working';
    case 'completed':
      return 'completed';
    case 'dead':
      return 'dead';
    case 'removed':
      return 'gone';
    case 'retried':
      return e.delayMs ? 'delayed' : 'pending';
    default:
      return undefined;
  }
}
