import { MAX_MS } from '../defaults.js';
import { NotReplicatedError, ValidationError } from '../errors.js';
import type { LeaseRef } from '../leases/types.js';
import { assertInt, assertOptions, toJson } from '../validate.js';
import { newRequestId } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import { touchScript } from '../leases/scripts.js';
import { settleScript } from './scripts.js';
import { ackItem, assertLease, delayItem, nackItem, rateLimitItem, rejectItem, requeueItem, settleBatch, waitChildrenItem, type SettleItem } from './settle-items.js';

/** What a touch found of a lease: still held (extended), lost, or ended by cancel(). */
/** A touch's answer for one lease: extended, lost, or ended by cancel() (with the reason it gave). */
export type Touched = 'held' | 'lost' | { readonly cancelled: string | undefined };

/**
 * Ending and extending leases for one Queue object: ack, nack, requeue, reject, delay (settle.lua,
 * fenced by the lease token, replay-safe per request id) and touch (touch.lua).
 */
export class Settling<Result> {
  constructor(private readonly ctx: QueueContext) {}

  ack(lease: LeaseRef, result?: Result): Promise<boolean> {
    return this.settleOne(ackItem(lease, this.resultJson(result)));
  }

  ackBatch(leases: ReadonlyArray<LeaseRef | { lease: LeaseRef; result?: Result }>): Promise<boolean[]> {
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

  nack(lease: LeaseRef, opts: { error?: unknown; delayMs?: number }): Promise<boolean> {
    assertOptions('nack options', opts, ['error', 'delayMs']);
    if (opts.delayMs !== undefined) assertInt('delayMs', opts.delayMs, { max: MAX_MS });
    return this.settleOne(nackItem(lease, opts.error, opts.delayMs));
  }

  requeue(lease: LeaseRef, opts: { delayMs?: number; reason?: string }): Promise<boolean> {
    assertOptions('requeue options', opts, ['delayMs', 'reason']);
    if (opts.delayMs !== undefined) assertInt('delayMs', opts.delayMs, { max: MAX_MS });
    return this.settleOne(requeueItem(lease, opts.delayMs ?? 0, opts.reason ?? 'requeued'));
  }

  rateLimit(lease: LeaseRef, delayMs: number, opts: { scope?: 'auto' | 'queue' }): Promise<boolean> {
    assertOptions('rateLimit options', opts, ['scope']);
    return this.settleOne(rateLimitItem(lease, delayMs, opts.scope));
  }

  /** Ends the lease with the job delayed until `when` (a step job): not a failed attempt. */
  delay(lease: LeaseRef, when: { runAt: number | Date } | { delayMs: number }): Promise<boolean> {
    return this.settleOne(delayItem(lease, when));
  }

  /** Ends the lease of a parent that waits for the children it added: not a failed attempt. */
  waitForChildren(lease: LeaseRef): Promise<boolean> {
    return this.settleOne(waitChildrenItem(lease));
  }

  reject(lease: LeaseRef, reason: unknown): Promise<boolean> {
    return this.settleOne(rejectItem(lease, reason));
  }

  /**
   * Settles any mix of outcomes in one script call. A retry of a call that failed passes the
   * same `reqId`: if the first try was applied, its answers come back (redis/replay.lua).
   */
  async settle(items: SettleItem[], reqId = newRequestId()): Promise<boolean[]> {
    if (items.length === 0) return [];
    const settled = await this.ctx.run(settleScript, { events: this.ctx.eventsFlag, reqId, items: settleBatch(items) });
    return this.ctx.replicated('settle', settled);
  }

  /**
   * Extends each lease by `extendMs` from now (default: its own lease length); updates its
   * deadline. `worker`: a worker's registration ('' none, lib/core/workers/presence.ts), sent
   * even without leases.
   */
  async touchMany(leases: ReadonlyArray<LeaseRef>, extendMs?: number, worker = ''): Promise<Touched[]> {
    this.ctx.assertOpen();
    if (extendMs !== undefined) assertInt('extendMs', extendMs, { min: 1, max: MAX_MS });
    leases.forEach((l, i) => assertLease(l, leases.length === 1 ? 'lease' : `leases[${i}]`));
    if (leases.length === 0 && worker === '') return [];
    if (extendMs === undefined) {
      leases.forEach((l, i) => {
        if (typeof l.leaseMs !== 'number') {
          throw new ValidationError(leases.length === 1 ? 'extendMs' : `leases[${i}]`, 'is needed for a lease without leaseMs (rebuilt from id and token)');
        }
      });
    }
    const out = await this.ctx.run(touchScript, { leases, extendMs, worker });
    return out.map((deadline, i) => {
      if (typeof deadline === 'string') return { cancelled: deadline };
      if (deadline <= 0) return deadline < 0 ? { cancelled: undefined } : 'lost';
      leases[i]!.deadline = deadline;
      return 'held';
    });
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

  private resultJson(result: Result | undefined): string {
    return result === undefined ? '' : toJson('result', result, this.ctx.maxPayloadBytes);
  }
}
