import type { HeldLease } from './job-view.js';
import type { Lease } from '../leases/types.js';
import type { Touched } from '../settles/settling.js';
import type { Presence } from '../workers/presence.js';

export interface HeartbeatHooks<Data> {
  /** The leases the worker holds now (the beat skips lost and moved ones). */
  held(): Iterable<HeldLease<Data>>;
  /** A touch found that the lease is no longer this worker's: lost, or ended by cancel(). */
  /** A touch found the lease gone; `cancelled`: cancel() ended it, with its reason if it gave one. */
  lost(held: HeldLease<Data>, cancelled: { readonly cancelled: string | undefined } | undefined): void;
  /** A beat's touch call failed. */
  error(error: unknown): void;
  /** Asked after each tick: whether to keep ticking. */
  more(): boolean;
}

type TouchMany<Data> = (leases: ReadonlyArray<Lease<Data>>, extendMs?: number, worker?: string) => Promise<Touched[]>;

/**
 * A worker's heartbeat: one timer, ticking at a quarter of the shortest lease held (at most an
 * eighth of the worker's ttl); each tick touches, in one call, every held lease that has run
 * half its length. The call carries the worker's registration when due, and is sent without
 * leases when no call registered the worker for long (lib/core/workers/presence.ts).
 */
export class Heartbeat<Data> {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private beating = false;

  constructor(
    private readonly touchMany: TouchMany<Data>,
    private readonly leaseMs: number,
    private readonly enabled: boolean,
    private readonly presence: Presence,
    private readonly hooks: HeartbeatHooks<Data>,
  ) {}

  /** Starts the timer, or moves it earlier for a lease shorter than the pending tick allows. */
  schedule(): void {
    if (!this.enabled) return;
    let shortest = this.leaseMs;
    for (const h of this.hooks.held()) shortest = Math.min(shortest, h.leaseLen);
    const period = Math.max(10, Math.min(Math.floor(shortest / 4), this.presence.maxBeatMs));
    if (this.timer && this.dueAt <= Date.now() + period) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = Date.now() + period;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.beat().finally(() => {
        if (this.hooks.more()) this.schedule();
      });
    }, period);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** job.touch(): extends one lease now (by `extendMs`, default its own length). */
  readonly touch = async (held: HeldLease<Data>, extendMs?: number): Promise<boolean> => {
    const [touched] = await this.touchMany([held.lease], extendMs);
    if (touched === 'held') held.renewedAt = Date.now();
    else this.hooks.lost(held, touched === 'lost' ? undefined : touched);
    return touched === 'held';
  };

  /** Touches every held lease now, whatever its age: a beat out of turn (cancel notices may have been missed). */
  beatAll(): void {
    if (this.enabled) void this.beat(true);
  }

  private async beat(all = false): Promise<void> {
    if (this.beating) return;
    const now = Date.now();
    const due: Array<HeldLease<Data>> = [];
    for (const h of this.hooks.held()) if (h.live && (all || now - h.renewedAt >= h.leaseLen / 2)) due.push(h);
    const worker = due.length > 0 ? this.presence.due() : this.presence.stale();
    if (due.length === 0 && worker === '') return;
    this.beating = true;
    try {
      const touched = await this.touchMany(due.map((h) => h.lease), undefined, worker);
      due.forEach((h, i) => {
        const t = touched[i]!;
        if (t === 'held') h.renewedAt = now;
        else this.hooks.lost(h, t === 'lost' ? undefined : t);
      });
    } catch (error) {
      this.hooks.error(error);
    } finally {
      this.beating = false;
    }
  }
}
