import { DEFAULT_LEASE_MS, DEFAULT_SWEEP_LIMIT, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, NotReplicatedError, QueueDeletedError } from '../errors.js';
import { rememberTraceContext } from '../instrumentation/index.js';
import type { Blocker } from '../redis/blocking-wait.js';
import { decodeRecord, policyOf } from '../redis/record.js';
import type { Lease, LeasedJob, LeaseOptions } from './types.js';
import { assertLeaseMs } from './lease-ms.js';
import { assertInt, assertOptions } from '../validate.js';
import { newRequestId } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import type { QueueSettings } from '../settings/queue-settings.js';
import { appendSettleItems, POLICY_DEFAULTS_ARG, type SettleItem } from '../settles/settle-items.js';

const LEASE_OPTION_KEYS = ['count', 'leaseMs', 'blockMs'] as const;

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

/** lease.lua's reply head: now, nextDue (-1: none), state, ghosts, then 4 fields per lease. */
const HEAD_FIELDS = 4;
const LEASE_FIELDS = 4;
const STATE = { open: 0, paused: 1, closed: 2, deleted: 3 } as const;

/**
 * Leasing for one Queue object: the lease call that also settles (the worker's hot path),
 * the public lease() with its blocking wait on the wake-up list, and the decoding of what
 * lease.lua answers.
 */
export class Leasing<Data> {
  constructor(
    private readonly ctx: QueueContext,
    private readonly settings: QueueSettings,
  ) {}

  /**
   * Leases up to `count` jobs. With nothing pending it waits up to `blockMs` on a
   * wake-up list (no polling) and returns as soon as a job arrives or comes due.
   */
  async lease(opts: LeaseOptions): Promise<Array<Lease<Data>>> {
    this.ctx.assertOpen();
    assertOptions('lease options', opts, LEASE_OPTION_KEYS);
    const count = opts.count ?? 1;
    const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    const blockMs = opts.blockMs ?? 0;
    assertInt('count', count, { min: 1, max: MAX_LEASE_COUNT });
    assertLeaseMs('leaseMs', leaseMs);
    assertInt('blockMs', blockMs, { max: MAX_TIMER_MS });
    const giveUpAt = Date.now() + blockMs;
    let woken = false;
    for (;;) {
      const step = await this.leaseStep([], count, leaseMs, woken);
      if (step.deleted) throw new QueueDeletedError(this.ctx.name);
      if (step.closed) return step.leases; // closed and drained: nothing will come
      const left = giveUpAt - Date.now();
      if (step.leases.length > 0 || left <= 0) return step.leases;
      const blocker = this.ctx.blockers.take();
      try {
        woken = await this.waitForWork(blocker, blockDuration(step, left));
      } finally {
        this.ctx.blockers.give(blocker, this.ctx.isClosed);
      }
    }
  }

  /**
   * Settles `items` and leases up to `count` more in one script call: the worker's hot path.
   * `woken` says the caller just consumed a wake-up token; a retry of a failed call passes the
   * same `reqId` (redis/replay.lua).
   */
  async leaseStep(items: SettleItem[], count: number, leaseMs: number, woken: boolean, reqId = newRequestId()): Promise<LeaseStep<Data>> {
    if (this.settings.prepareLease) await this.settings.beforeLease();
    const args: Array<string | number> = [this.ctx.eventsFlag, reqId, count, leaseMs, woken ? 1 : 0, DEFAULT_SWEEP_LIMIT, POLICY_DEFAULTS_ARG];
    const decodeSettled = appendSettleItems(args, items);
    const [settled, head] = (await this.ctx.run('lease', 'lease', args, [this.ctx.keys.request(reqId)])) as [number[], Array<string | number>];
    const step = this.decode(head);
    step.settled = decodeSettled(settled);
    if (step.ghosts > 0) this.ctx.reportGhosts(step.ghosts);
    if (this.ctx.waitsForReplicas && items.length > 0) {
      try {
        await this.ctx.replicated('settle', step.settled);
      } catch (err) {
        if (!(err instanceof NotReplicatedError)) throw err;
        step.notReplicated = err as NotReplicatedError<boolean[]>;
      }
    }
    return step;
  }

  /**
   * Blocks on the wake-up list for up to `ms`. True when a token was taken, or when the wait
   * was cut off (half-open socket): the caller leases again either way.
   */
  async waitForWork(blocker: Blocker, ms: number): Promise<boolean> {
    try {
      const { value, cut } = await blocker.pop(this.ctx.keys.byName.wake, ms);
      return cut || value !== null;
    } catch (err) {
      if (this.ctx.isClosed) throw new ClosedError(`queue '${this.ctx.name}'`);
      throw this.ctx.wrapError(err, 'lease');
    }
  }

  private decode(head: Array<string | number>): LeaseStep<Data> {
    const now = Number(head[0]);
    const nextDue = Number(head[1]);
    const leases: Array<Lease<Data>> = [];
    for (let i = HEAD_FIELDS; i < head.length; i += LEASE_FIELDS) {
      const deadline = Number(head[i + 2]);
      leases.push({ job: toLeasedJob<Data>(String(head[i]), String(head[i + 3]), now), token: String(head[i + 1]), deadline, leaseMs: deadline - now });
    }
    return {
      settled: [],
      leases,
      now,
      nextDue: nextDue >= 0 ? nextDue : undefined,
      paused: head[2] === STATE.paused,
      closed: head[2] === STATE.closed,
      deleted: head[2] === STATE.deleted,
      ghosts: Number(head[3]),
    };
  }
}

function toLeasedJob<Data>(id: string, record: string, now: number): LeasedJob<Data> {
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
  if (meta.tc !== undefined) rememberTraceContext(job, meta.tc);
  return job;
}

/** How long to block: until the next delayed job is due, at most `left`. */
export function blockDuration(step: { now: number; nextDue: number | undefined }, left: number): number {
  if (step.nextDue === undefined) return left;
  return Math.min(left, Math.max(1, step.nextDue - step.now));
}
