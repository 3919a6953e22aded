import { QueueDeletedError, QueueInUseError, type RoleHolder } from '../errors.js';
import type { Blocker } from '../redis/blocking-wait.js';
import type { SettingsContext } from '../settings/settings-context.js';
import { parseHolder } from './identity.js';
import { acquireRoleScript, refreshRoleScript, releaseRoleScript, type Role, type RoleArgs } from './scripts.js';

/**
 * One exclusive role of one Queue object: a Redis key holding this process's identity with
 * a ttl (SET NX PX), refreshed every ttl/3 while held, deleted on release. A process that
 * crashes stops refreshing, so its role is free again after at most `ttlMs`.
 */
export class RoleLease {
  readonly value: string;
  /** The arguments of this role's calls (roles/scripts.ts). */
  private readonly args: RoleArgs;
  private held = false;
  private acquiring: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private blocker: Blocker | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: SettingsContext,
    readonly role: Role,
    readonly identity: RoleHolder,
    private readonly waitMs: number,
    private readonly ttlMs: number,
  ) {
    this.value = JSON.stringify(identity);
    this.args = { role, holder: this.value, ttlMs };
  }

  /** Resolves once this object holds the role; QueueInUseError if another holds it past waitMs. */
  ensure(): Promise<void> {
    if (this.held) return Promise.resolve();
    this.acquiring ??= this.acquire().finally(() => {
      this.acquiring = undefined;
    });
    return this.acquiring;
  }

  /** The role was found taken by another (e.g. after this process stalled past the ttl). */
  lost(): void {
    this.held = false;
    this.stopTimer();
  }

  private async acquire(): Promise<void> {
    const giveUpAt = Date.now() + this.waitMs;
    for (;;) {
      const r = await this.ctx.run(acquireRoleScript, this.args);
      if (r.kind === 'ok') {
        this.held = true;
        this.startTimer();
        return;
      }
      if (r.kind === 'deleted') throw new QueueDeletedError(this.ctx.name);
      const left = giveUpAt - Date.now();
      if (left <= 0 || this.stopped) throw new QueueInUseError(this.ctx.name, this.role, parseHolder(r.holder));
      // Woken by a release; a crashed holder never releases, so wait at most until its key expires.
      const ms = Math.min(left, Math.max(10, r.msLeft + 20));
      this.blocker ??= this.ctx.openBlocker();
      try {
        await this.blocker.pop(this.ctx.keys.derived.roleFree(this.role), ms);
      } catch (err) {
        if (this.stopped || this.ctx.isClosed) throw this.ctx.wrapError(err, 'acquire role');
      }
    }
  }

  private startTimer(): void {
    this.stopTimer();
    this.timer = setInterval(() => void this.refresh(), Math.max(10, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async refresh(): Promise<void> {
    if (!this.held || this.ctx.isClosed) return;
    try {
      if (!(await this.ctx.run(refreshRoleScript, this.args))) this.lost();
    } catch {
      // Redis away: the next tick tries again; past the ttl another process may take over.
    }
  }

  /** Gives the role up (and wakes one process waiting for it). */
  async release(): Promise<void> {
    this.stopped = true;
    this.stopTimer();
    if (this.blocker) {
      this.ctx.closeBlocker(this.blocker);
      this.blocker = undefined;
    }
    if (!this.held) return;
    this.held = false;
    await this.ctx.run(releaseRoleScript, this.args).catch(() => undefined);
  }
}
