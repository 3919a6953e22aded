import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorService } from '@nestjs/terminus';
import { RelqConfigError } from '../errors.js';
import * as msg from '../relq.messages.js';
import { QueueHealthService, type RelqHealthReport } from './queue-health.service.js';

/** The details reported under the indicator's key (terminus adds `status`). */
export type QueueHealthDetails = Omit<RelqHealthReport, 'healthy'>;

/** A terminus HealthIndicatorResult for `key`, spelled out so that no terminus type leaks into relq's. */
export type QueueHealthIndicatorResult<Key extends string = string> = {
  [K in Key]: { status: 'up' | 'down' } & QueueHealthDetails;
};

/**
 * `@nestjs/terminus` health indicator of relq. Terminus is an optional peer dependency:
 * it is imported only when `isHealthy()` runs, so apps without it still start (use
 * `QueueHealthService.check()` there).
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.queues.isHealthy('queues')]); }
 * ```
 */
@Injectable()
export class QueueHealthIndicator {
  private indicators: HealthIndicatorService | undefined;

  constructor(
    private readonly health: QueueHealthService,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Up when Redis answers and every loop, sweeper and threshold is fine; down with details otherwise. Never throws. */
  async isHealthy<const Key extends string>(key: Key): Promise<QueueHealthIndicatorResult<Key>> {
    const session = (await this.terminus()).check(key);
    const { healthy, ...details } = await this.health.check();
    const result = healthy ? session.up(details) : session.down(details);
    return result as unknown as QueueHealthIndicatorResult<Key>;
  }

  private async terminus(): Promise<HealthIndicatorService> {
    if (this.indicators) return this.indicators;
    let mod: typeof import('@nestjs/terminus');
    try {
      mod = await import('@nestjs/terminus');
    } catch (err) {
      throw new RelqConfigError(msg.terminusMissing(msg.textOf(err)));
    }
    let service: HealthIndicatorService | undefined;
    try {
      service = this.moduleRef.get(mod.HealthIndicatorService, { strict: false });
    } catch {
      service = undefined; // TerminusModule not imported: a private one works the same
    }
    this.indicators = service ?? new mod.HealthIndicatorService();
    return this.indicators;
  }
}
