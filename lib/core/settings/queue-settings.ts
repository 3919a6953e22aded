import { MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, QueueDeletedError, ValidationError } from '../errors.js';
import type { SettingsContext } from './settings-context.js';
import { newIdentity } from '../roles/identity.js';
import { ProducerGate, type ProduceItem } from '../backpressure/backpressure.js';
import { RoleLease } from '../roles/exclusive-role.js';
import { parseRateLimit } from '../rate-limits/stored.js';
import type { RateLimit } from '../rate-limits/types.js';
import type { QueueStats } from './types.js';
import type { ResolvedSettings } from '../queue/options.js';
import { assertInt, assertOptions } from '../validate.js';

/** A blocked producer's registration lives this long unless renewed (every attempt renews it). */
const WAITER_TTL_MS = 3000;
const SHUTDOWN_CLEANUP_MS = 1000;

// Checked with the other queue options (lib/core/queue/options.ts); the Nest glue checks its own with it.
export { assertCheckClosed } from '../queue/options.js';

/** A queue's shared settings and state, as stored in Redis. */
export interface QueueState {
  closed: boolean;
  /** 0: unbounded */
  bound: number;
  /** 0: no per-group limit */
  groupConcurrency: number;
  stats: boolean;
  /** Producers blocked on the full queue (registrations not yet expired). */
  waitingProducers: number;
  /** The stored rate limits (undefined: none; max 0: only holds from job.rateLimit). */
  limiter: RateLimit | undefined;
  groupLimiter: RateLimit | undefined;
}

/**
 * The bounded / fair / lifecycle / exclusive / stats side of one Queue object
 * (docs/bounded-fair-batch.md). The Queue keeps its plain add and lease paths untouched
 * unless these options are used.
 */
export class QueueSettings {
  readonly identity = newIdentity();
  /** Adds go through produce.lua (reads the queue's state) instead of add.lua. */
  readonly managed: boolean;
  /** Leases must first store the settings / take the consumer role. */
  readonly prepareLease: boolean;
  readonly bound: number;
  readonly producerRole: RoleLease | undefined;
  readonly consumerRole: RoleLease | undefined;
  private readonly gate: ProducerGate;
  private readonly settings: [bound: string, stats: string, glimit: string, limiter: string, groupLimiter: string] | undefined;
  private configured: Promise<void> | undefined;

  constructor(
    private readonly ctx: SettingsContext,
    settings: ResolvedSettings,
  ) {
    const { bound, stats, groupConcurrency, limiter, groupLimiter, exclusive, checkClosed } = settings;
    this.bound = bound ?? 0;
    const anySetting =
      bound !== undefined || stats !== undefined || groupConcurrency !== undefined || limiter !== undefined || groupLimiter !== undefined;
    if (anySetting) {
      this.settings = [
        bound === undefined ? '' : String(bound),
        stats === undefined ? '' : stats ? '1' : '0',
        groupConcurrency === undefined ? '' : String(groupConcurrency),
        limiter ?? '',
        groupLimiter ?? '',
      ];
    }
    this.producerRole = exclusive?.producer ? new RoleLease(ctx, 'producer', this.identity, exclusive.waitMs, exclusive.ttlMs) : undefined;
    this.consumerRole = exclusive?.consumer ? new RoleLease(ctx, 'consumer', this.identity, exclusive.waitMs, exclusive.ttlMs) : undefined;
    this.managed =
      checkClosed ?? (bound !== undefined || stats === true || this.producerRole !== undefined);
    this.prepareLease = anySetting || this.consumerRole !== undefined;
    const { host, pid, instance } = this.identity;
    this.gate = new ProducerGate(ctx, {
      waiterId: `${host}:${pid}:${instance}`,
      waiterTtlMs: WAITER_TTL_MS,
      bound: this.bound,
      roleValue: () => (this.producerRole ? this.producerRole.value : ''),
      onInUse: () => this.producerRole?.lost(),
      hasSettings: this.settings !== undefined,
      reconfigure: () => {
        this.configured = undefined;
        return this.configure();
      },
    });
  }

  /** This object has bound / stats / groupConcurrency to store in Redis. */
  get hasSettings(): boolean {
    return this.settings !== undefined;
  }

  /** Adds of this object wait for room in a full queue. */
  get addsWaiting(): boolean {
    return this.gate.hasWaiting;
  }

  /** Stores bound / stats / groupConcurrency in Redis, once per Queue object. */
  configure(): Promise<void> {
    if (!this.settings) return Promise.resolve();
    this.configured ??= this.ctx
      .run('queueAdmin', 'configure', [this.ctx.eventsFlag, 'configure', ...this.settings])
      .then((r) => {
        if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
      })
      .catch((err: unknown) => {
        this.configured = undefined; // try again next time
        throw err;
      });
    return this.configured;
  }

  async produce(items: ProduceItem[], mode: 'wait' | 'try', waitMs: number | undefined): Promise<number[]> {
    await this.configure();
    if (this.producerRole) await this.producerRole.ensure();
    return this.gate.submit(items, mode, waitMs);
  }

  async beforeLease(): Promise<void> {
    await this.configure();
    if (this.consumerRole) await this.consumerRole.ensure();
  }

  async closeQueue(): Promise<boolean> {
    return this.admin('close') as Promise<boolean>;
  }

  async reopenQueue(): Promise<boolean> {
    return this.admin('reopen') as Promise<boolean>;
  }

  private async admin(op: 'close' | 'reopen'): Promise<boolean> {
    const r = await this.ctx.run('queueAdmin', op === 'close' ? 'closeQueue' : 'reopenQueue', [this.ctx.eventsFlag, op]);
    if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
    return r === 1;
  }

  async state(): Promise<QueueState> {
    const r = await this.ctx.run('queueAdmin', 'queueState', [this.ctx.eventsFlag, 'state']);
    if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
    const [closed, bound, glimit, stats, waiters, rl, grl] = r as [number, number, number, number, number, string, string];
    return {
      closed: closed === 1,
      bound,
      groupConcurrency: glimit,
      stats: stats === 1,
      waitingProducers: waiters,
      limiter: parseRateLimit(rl),
      groupLimiter: parseRateLimit(grl),
    };
  }

  async stats(): Promise<QueueStats> {
    const [pm, pb, cm, cb, on] = (await this.ctx.run('queueAdmin', 'stats', [this.ctx.eventsFlag, 'stats'])) as number[];
    return { enabled: on === 1, produced: { messages: pm!, bytes: pb! }, consumed: { messages: cm!, bytes: cb! } };
  }

  async deleteQueue(tombstoneMs: number): Promise<number> {
    const removed = (await this.ctx.run('deleteQueue', 'deleteQueue', [this.ctx.eventsFlag, tombstoneMs])) as number;
    this.configured = undefined;
    return removed;
  }

  /** The Queue object is closing: waiting adds fail, roles are released. */
  async shutdown(): Promise<void> {
    const cleanup = Promise.all([
      this.gate.stop(new ClosedError(`the Queue object of '${this.ctx.name}' (an add() waiting for room was released)`)),
      this.producerRole?.release(),
      this.consumerRole?.release(),
    ]);
    // Waiting adds are released at once; the Redis clean-up (leaving the waiters, deleting
    // held roles) gets a moment, never more: with Redis away, registrations and roles expire.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([cleanup, new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_CLEANUP_MS)))]);
    clearTimeout(timer);
  }
}
