import { MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, QueueDeletedError, ValidationError } from '../errors.js';
import type { SettingsContext } from './settings-context.js';
import { newIdentity } from '../roles/identity.js';
import { ProducerGate } from '../backpressure/backpressure.js';
import type { AddReply, ProduceItem } from '../backpressure/scripts.js';
import { RoleLease } from '../roles/exclusive-role.js';
import type { QueueStats } from './types.js';
import {
  closeQueueScript,
  configureQueueScript,
  deleteQueueScript,
  queueStateScript,
  queueStatsScript,
  reopenQueueScript,
  type QueueState,
  type StoredSettings,
} from './scripts.js';
import type { ResolvedSettings } from '../queue/options.js';
import { assertInt, assertOptions } from '../validate.js';

/** A blocked producer's registration lives this long unless renewed (every attempt renews it). */
const WAITER_TTL_MS = 3000;
const SHUTDOWN_CLEANUP_MS = 1000;

// Checked with the other queue options (lib/core/queue/options.ts); the Nest glue checks its own with it.
export { assertCheckClosed } from '../queue/options.js';

export type { QueueState } from './scripts.js';

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
  private readonly settings: StoredSettings | undefined;
  private configured: Promise<void> | undefined;

  constructor(
    private readonly ctx: SettingsContext,
    settings: ResolvedSettings,
  ) {
    const { bound, stats, metrics, groupConcurrency, limiter, groupLimiter, globalConcurrency, groupOverrides, exclusive, checkClosed } = settings;
    this.bound = bound ?? 0;
    const anySetting =
      bound !== undefined ||
      stats !== undefined ||
      metrics !== undefined ||
      groupConcurrency !== undefined ||
      limiter !== undefined ||
      groupLimiter !== undefined ||
      globalConcurrency !== '' ||
      groupOverrides !== '';
    if (anySetting) {
      this.settings = {
        bound: bound === undefined ? '' : String(bound),
        stats: stats === undefined ? '' : stats ? '1' : '0',
        glimit: groupConcurrency === undefined ? '' : String(groupConcurrency),
        rl: limiter ?? '',
        grl: groupLimiter ?? '',
        gc: globalConcurrency,
        govr: groupOverrides,
        mx: metrics === undefined ? '' : String(metrics),
      };
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
      .run(configureQueueScript, { events: this.ctx.eventsFlag, ...this.settings })
      .then((r) => {
        if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
      })
      .catch((err: unknown) => {
        this.configured = undefined; // try again next time
        throw err;
      });
    return this.configured;
  }

  async produce(items: ProduceItem[], mode: 'wait' | 'try', waitMs: number | undefined): Promise<AddReply[]> {
    await this.configure();
    if (this.producerRole) await this.producerRole.ensure();
    return this.gate.submit(items, mode, waitMs);
  }

  async beforeLease(): Promise<void> {
    await this.configure();
    if (this.consumerRole) await this.consumerRole.ensure();
  }

  /** Stores the queue-wide concurrency ('0' removes it) or group overrides now, whatever this object's options. */
  async setShared(change: Pick<StoredSettings, 'gc'> | Pick<StoredSettings, 'govr'>): Promise<void> {
    const unchanged: StoredSettings = { bound: '', stats: '', glimit: '', rl: '', grl: '', gc: '', govr: '', mx: '' };
    const r = await this.ctx.run(configureQueueScript, { events: this.ctx.eventsFlag, ...unchanged, ...change });
    if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
  }

  async closeQueue(): Promise<boolean> {
    return this.notDeleted(await this.ctx.run(closeQueueScript, { events: this.ctx.eventsFlag }));
  }

  async reopenQueue(): Promise<boolean> {
    return this.notDeleted(await this.ctx.run(reopenQueueScript, { events: this.ctx.eventsFlag }));
  }

  async state(): Promise<QueueState> {
    return this.notDeleted(await this.ctx.run(queueStateScript, {}));
  }

  stats(): Promise<QueueStats> {
    return this.ctx.run(queueStatsScript, {});
  }

  async deleteQueue(tombstoneMs: number): Promise<number> {
    const removed = await this.ctx.run(deleteQueueScript, { events: this.ctx.eventsFlag, tombstoneMs });
    this.configured = undefined;
    return removed;
  }

  /** A settings call's answer, or QueueDeletedError for a deleted queue's. */
  private notDeleted<T>(r: T | 'deleted'): T {
    if (r === 'deleted') throw new QueueDeletedError(this.ctx.name);
    return r;
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
