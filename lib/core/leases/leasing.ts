import { DEFAULT_LEASE_MS, MAX_LEASE_COUNT, MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, NotReplicatedError, QueueDeletedError } from '../errors.js';
import type { Blocker } from '../redis/blocking-wait.js';
import type { LeaseStep } from './lease-step.js';
import { leaseScript } from './scripts.js';
import type { Lease, LeaseOptions } from './types.js';
import { assertLeaseMs } from './lease-ms.js';
import { assertInt, assertOptions } from '../validate.js';
import { newRequestId } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import type { QueueSettings } from '../settings/queue-settings.js';
import { settleBatch, type SettleItem } from '../settles/settle-items.js';

const LEASE_OPTION_KEYS = ['count', 'leaseMs', 'blockMs'] as const;

/**
 * Leasing for one Queue object: the lease call that also settles (the worker's hot path)
 * and the public lease() with its blocking wait on the wake-up list.
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
        // paused: no lease promotes a due job, so its due time is no reason to lease again
        woken = await this.waitForWork(blocker, step.paused ? left : blockDuration(step, left));
      } finally {
        this.ctx.blockers.give(blocker, this.ctx.isClosed);
      }
    }
  }

  /**
   * Settles `items` and leases up to `count` more in one script call: the worker's hot path.
   * `woken` says the caller just consumed a wake-up token; `worker` is a worker's registration
   * ('' none, lib/core/workers/presence.ts); a retry of a failed call passes the same `reqId`
   * (redis/replay.lua).
   */
  async leaseStep(items: SettleItem[], count: number, leaseMs: number, woken: boolean, reqId = newRequestId(), worker = ''): Promise<LeaseStep<Data>> {
    if (this.settings.prepareLease) await this.settings.beforeLease();
    const step = (await this.ctx.run(leaseScript, { events: this.ctx.eventsFlag, reqId, count, leaseMs, woken, worker, items: settleBatch(items), parentQueueOf: this.ctx.parentQueueOf })) as LeaseStep<Data>;
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
}

/** How long to block: until the next delayed job is due, at most `left`. */
export function blockDuration(step: { now: number; nextDue: number | undefined }, left: number): number {
  const due = untilDue(step);
  return due === undefined ? left : Math.min(left, due);
}

/** Ms from a lease call until the next delayed job it saw is due (at least 1); undefined when it saw none. */
export function untilDue(step: { now: number; nextDue: number | undefined }): number | undefined {
  return step.nextDue === undefined ? undefined : Math.max(1, step.nextDue - step.now);
}
