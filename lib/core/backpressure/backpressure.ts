import {
  ClosedError,
  QueueClosedError,
  QueueDeletedError,
  QueueFullError,
  QueueInUseError,
  RelqError,
  ValidationError,
} from '../errors.js';
import type { Blocker } from '../redis/blocking-wait.js';
import { sleep, type SettingsContext } from '../settings/settings-context.js';
import { parseHolder } from '../roles/identity.js';
import { leaveWaiterScript, produceScript, renewWaiterScript, type AddReply, type ProduceItem } from './scripts.js';
import { PartitionMovedError } from '../partitions/errors.js';

export interface ProducerGateOptions {
  /** This object's registration in the `waiters` zset. */
  waiterId: string;
  waiterTtlMs: number;
  /** The configured bound, for error messages. */
  bound: number;
  /** The producer role's value when exclusive ('' otherwise), read at each attempt. */
  roleValue: () => string;
  /** The exclusive producer role turned out to be held by another. */
  onInUse: () => void;
  /** This object stores bound / stats / groupConcurrency in Redis (QueueSettings.configure). */
  hasSettings: boolean;
  /** Stores them again (produce.lua found them missing). */
  reconfigure: () => Promise<void>;
}

interface Waiting {
  items: ProduceItem[];
  deadline: number;
  resolve(created: AddReply[]): void;
  reject(err: unknown): void;
}

const MAX_BLOCK_MS = 20_000;

type Reply =
  | { kind: 'ok'; created: AddReply[] }
  | { kind: 'full'; free: number; waiters: number; bound: number }
  | { kind: 'error'; error: RelqError; all: boolean };

/**
 * The producer side of a bounded queue for one Queue object. Adds that find the queue full
 * wait here in arrival order (a local FIFO); the object registers ONE waiter in Redis (the
 * `waiters` zset, score = expiry) and blocks on the `notfull` list with one dedicated
 * connection, however many adds wait. Settles that free slots push tokens there; the head
 * add then tries again. While waiting, a timer renews the registration every ttl/3 on the
 * command connection, so the blocking pop keeps its place in Redis's FIFO of blocked
 * clients; the renewal also forgets expired (crashed) waiters and hands their turn on.
 * See docs/bounded-fair-batch.md.
 */
export class ProducerGate {
  private readonly waiting: Waiting[] = [];
  private running = false;
  private registered = false;
  private blocker: Blocker | undefined;
  private stopped = false;
  /** The waiting add whose attempt is in flight. */
  private attempting: Waiting | undefined;
  /** The bound Redis reported with the last 'full' reply. */
  private lastBound = 0;

  constructor(
    private readonly ctx: SettingsContext,
    private readonly o: ProducerGateOptions,
  ) {}

  /** Adds wait here for room: later adds must queue behind them, not take the plain path. */
  get hasWaiting(): boolean {
    return this.waiting.length > 0;
  }

  /** Adds the items, waiting for room (`mode` 'wait') or failing at once when full ('try'). */
  async submit(items: ProduceItem[], mode: 'wait' | 'try', waitMs: number | undefined): Promise<AddReply[]> {
    if (this.stopped) throw new ClosedError(`queue '${this.ctx.name}'`);
    if (mode === 'try' || this.waiting.length === 0) {
      // A try never uses the waiter id: it must not jump ahead of this object's own waiters.
      const r = await this.attempt(items, mode === 'try' ? 't' : 'w', mode === 'try' ? '' : this.o.waiterId, this.waiting.length > 0);
      if (r.kind === 'ok') return r.created;
      if (r.kind === 'error') throw r.error;
      if (mode === 'try') throw new QueueFullError(this.ctx.name, r.bound);
      // Closed while the first attempt was in flight: there is nothing left to wait on.
      if (this.stopped) throw new ClosedError(`queue '${this.ctx.name}'`);
      this.registered = true;
      if (waitMs === 0) {
        await this.leaveIfIdle();
        throw new QueueFullError(this.ctx.name, r.bound);
      }
    }
    return new Promise<AddReply[]>((resolve, reject) => {
      if (this.stopped) {
        reject(new ClosedError(`queue '${this.ctx.name}'`));
        return;
      }
      this.waiting.push({ items, deadline: waitMs === undefined ? Infinity : Date.now() + waitMs, resolve, reject });
      if (!this.running) void this.loop(true);
    });
  }

  private async loop(justFull: boolean): Promise<void> {
    this.running = true;
    let blockNext = justFull;
    const renewal = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.o.waiterTtlMs / 3)));
    renewal.unref();
    try {
      while (this.waiting.length > 0 && !this.stopped) {
        this.expire();
        if (this.waiting.length === 0) break;
        if (blockNext) {
          const now = Date.now();
          const soonest = Math.min(...this.waiting.map((w) => w.deadline));
          // The registration is renewed by a timer meanwhile (renew()); the cap only bounds a
          // wait on a socket that went half-open (the Blocker's watchdog).
          const ms = Math.max(1, Math.min(soonest - now, MAX_BLOCK_MS));
          this.blocker ??= this.ctx.openBlocker();
          let token: string | null = null;
          try {
            token = (await this.blocker.pop(this.ctx.keys.derived.notfull, ms)).value;
          } catch {
            if (this.stopped) break;
            await sleep(100);
          }
          if (token === 'x') {
            this.failAll(new QueueDeletedError(this.ctx.name));
            break;
          }
          this.expire();
          if (this.waiting.length === 0) break;
        }
        const head = this.waiting[0]!;
        let r: Reply;
        this.attempting = head;
        try {
          r = await this.attempt(head.items, 'w', this.o.waiterId, this.waiting.length > 1);
        } catch (err) {
          this.waiting.shift();
          this.attempting = undefined;
          head.reject(err);
          blockNext = false;
          continue;
        }
        this.attempting = undefined;
        if (r.kind === 'ok') {
          this.waiting.shift();
          this.registered = this.waiting.length > 0;
          head.resolve(r.created);
          blockNext = false;
        } else if (r.kind === 'full') {
          this.registered = true;
          blockNext = true;
        } else if (r.all) {
          this.failAll(r.error);
        } else {
          this.waiting.shift();
          head.reject(r.error);
          blockNext = false;
        }
      }
    } finally {
      clearInterval(renewal);
      this.running = false;
      // Stopped while the head's attempt was in flight and the queue was still full.
      if (this.stopped) this.failAll(new ClosedError(`queue '${this.ctx.name}'`));
      if (!this.stopped) await this.leaveIfIdle();
    }
  }

  /** Keeps this object's waiter registration alive while it waits. */
  private async renew(): Promise<void> {
    if (!this.registered || this.stopped || this.ctx.isClosed) return;
    await this.ctx.run(renewWaiterScript, { waiter: this.o.waiterId, ttlMs: this.o.waiterTtlMs }).catch(() => undefined);
  }

  private expire(): void {
    const now = Date.now();
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i]!;
      if (w.deadline <= now) {
        this.waiting.splice(i, 1);
        const bound = this.lastBound || this.o.bound;
        w.reject(new QueueFullError(this.ctx.name, bound, `queue '${this.ctx.name}' is still full (bound ${bound}) after waiting waitMs`));
      } else i++;
    }
  }

  private failAll(err: unknown): void {
    for (const w of this.waiting.splice(0)) w.reject(err);
  }

  private async leaveIfIdle(): Promise<void> {
    if (!this.registered || this.waiting.length > 0) return;
    this.registered = false;
    await this.ctx.run(leaveWaiterScript, { waiter: this.o.waiterId }).catch(() => undefined);
  }

  private async attempt(items: ProduceItem[], mode: 'w' | 't', waiter: string, keep: boolean): Promise<Reply> {
    const args = {
      events: this.ctx.addFlag(this.ctx.eventsFlag),
      waiter,
      mode,
      keep,
      waiterTtlMs: this.o.waiterTtlMs,
      roleValue: this.o.roleValue(),
      hasSettings: this.o.hasSettings,
      jobs: items,
    };
    let r = await this.ctx.run(produceScript, args);
    if (r.kind === 'configure') {
      // Our settings are gone from Redis (the queue was deleted and is used again): store them.
      await this.o.reconfigure();
      r = await this.ctx.run(produceScript, args);
    }
    switch (r.kind) {
      case 'ok':
        return r;
      case 'full':
        this.lastBound = r.bound;
        return r;
      case 'closed':
        return { kind: 'error', error: new QueueClosedError(this.ctx.name), all: true };
      case 'deleted':
        return { kind: 'error', error: new QueueDeletedError(this.ctx.name), all: true };
      case 'moved':
        return { kind: 'error', error: new PartitionMovedError(this.ctx.name), all: true };
      case 'inuse':
        this.o.onInUse();
        return { kind: 'error', error: new QueueInUseError(this.ctx.name, 'producer', parseHolder(r.holder)), all: true };
      case 'toobig':
        return {
          kind: 'error',
          error: new ValidationError('jobs', `${items.length} jobs can never fit in queue '${this.ctx.name}' (bound ${r.bound})`),
          all: false,
        };
      default:
        return { kind: 'error', error: new RelqError(`relq add: unexpected reply ${r.kind === 'unexpected' ? r.reply : r.kind}`, 'RELQ_REDIS'), all: false };
    }
  }

  /** Releases every waiting add with `err` (the Queue object is closing). */
  async stop(err: unknown): Promise<void> {
    this.stopped = true;
    for (const w of this.waiting.splice(0)) {
      // An attempt in flight may have added the job: its reply settles it, not the stop.
      if (w === this.attempting) this.waiting.push(w);
      else w.reject(err);
    }
    if (this.blocker) {
      this.ctx.closeBlocker(this.blocker);
      this.blocker = undefined;
    }
    if (this.registered) {
      this.registered = false;
      await this.ctx.run(leaveWaiterScript, { waiter: this.o.waiterId }).catch(() => undefined);
    }
  }
}
