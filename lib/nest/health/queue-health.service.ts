import { Inject, Injectable } from '@nestjs/common';
import type { QueueState } from '../../core/settings/queue-settings.js';
import type { RedisClient } from '../../core/redis/connection.js';
import type { QueueCounts } from '../../core/management/read-types.js';
import type { QueueStats } from '../../core/settings/types.js';
import { defaultSweeperStaleMs } from '../defaults.js';
import type { ResolvedRootOptions } from '../queues/root-options.js';
import { RELQ_RESOLVED_OPTIONS } from '../relq.constants.js';
import * as msg from '../relq.messages.js';
import * as healthMsg from './health.messages.js';
import type { ProcessorStatus } from '../processors/processor-runner.js';
import { QueueRegistry } from '../queues/queue.registry.js';
import type { SweeperStatus } from '../sweeper/queue-sweeper.js';
import { RelqConnection } from '../queues/relq-connection.js';
import { withTimeout } from '../with-timeout.js';

/** Reachability of one Redis connection. */
export interface RedisHealth {
  /** Where it points (no credentials). */
  target: string;
  reachable: boolean;
  /** PING round trip, when reachable. */
  latencyMs?: number;
  error?: string;
}

/** How full a bounded queue is. */
export interface QueueBoundUsage {
  /** The bound stored in Redis (set by this app's `bound` or another producer's). */
  limit: number;
  /** pending + working + delayed: what the bound counts. */
  unfinished: number;
  /** limit − unfinished, at least 0. */
  free: number;
  /** unfinished / limit (may exceed 1 after a dead-letter redrive). */
  usage: number;
  /** Producers (Queue objects in any process) blocked in add() until there is room. */
  waitingProducers: number;
}

export interface QueueHealth {
  healthy: boolean;
  /** Null when Redis could not be read. */
  counts: QueueCounts | null;
  /** closeQueue() was called (adds fail, consumers drain and stop); null when unknown. */
  closed: boolean | null;
  /** Null when the queue is unbounded (or Redis could not be read). */
  bound: QueueBoundUsage | null;
  /** Produced / consumed messages and bytes; null when stats are off for the queue (or unknown). */
  stats: QueueStats | null;
  thresholds: { maxPending?: number; maxDead?: number; requireWorkers?: boolean };
  /** Live workers of the queue in any process (`queue.getWorkers()`); null unless `requireWorkers` read them (jobs pending). */
  liveWorkers: number | null;
  sweeper: (SweeperStatus & { healthy: boolean }) | null;
  processors: ProcessorStatus[];
  problems: string[];
}

/** Everything the health check looked at. `healthy` is false when any `problems`. */
export interface RelqHealthReport {
  healthy: boolean;
  /** Epoch ms of the check. */
  checkedAt: number;
  workersEnabled: boolean;
  redis: RedisHealth[];
  queues: Record<string, QueueHealth>;
  /** Every reason for `healthy: false`, one line each. */
  problems: string[];
}

/**
 * The health check without @nestjs/terminus: Redis reachable (and its PING latency),
 * each lease loop alive (progressing or waiting, not wedged), each sweeper's last run,
 * and per-queue backlog and dead-letter counts against the optional thresholds (and, with
 * `requireWorkers`, pending jobs without any live worker in any process). Per queue
 * it also reports whether it is closed, how full a bounded queue is (and how many
 * producers wait for room) and the produced / consumed stats when they are on: details,
 * not problems (a full bounded queue is backpressure at work). It never throws: failures
 * become `problems`.
 */
@Injectable()
export class QueueHealthService {
  constructor(
    @Inject(RELQ_RESOLVED_OPTIONS) private readonly options: ResolvedRootOptions,
    private readonly registry: QueueRegistry,
    private readonly connection: RelqConnection,
  ) {}

  async check(): Promise<RelqHealthReport> {
    const now = Date.now();
    const problems: string[] = [];
    const { timeoutMs } = this.options.health;

    // One PING per distinct connection (the shared one, plus queues with their own).
    const clients = new Map<RedisClient, string>([[this.connection.client, this.connection.describe]]);
    for (const { queue } of this.registry.getEntries()) {
      if (!clients.has(queue.client)) clients.set(queue.client, healthMsg.ownConnection(queue.name));
    }
    const pings = await Promise.all([...clients].map(([client, target]) => this.ping(client, target, timeoutMs)));
    const reachable = new Map<RedisClient, boolean>([...clients.keys()].map((c, i) => [c, pings[i]!.reachable]));
    for (const p of pings) if (!p.reachable) problems.push(healthMsg.redisUnreachable(p.target, p.error));

    const runners = this.registry.getRunners();
    const queues: Record<string, QueueHealth> = {};
    await Promise.all(
      this.registry.getEntries().map(async ({ queue, options }) => {
        const qp: string[] = [];
        let counts: QueueCounts | null = null;
        let state: QueueState | null = null;
        let stats: QueueStats | null = null;
        if (reachable.get(queue.client)) {
          const [c, st] = await Promise.allSettled([
            withTimeout(queue.counts(), timeoutMs, 'counts'),
            withTimeout(queue.queueState(), timeoutMs, 'queueState'),
          ]);
          if (c.status === 'fulfilled') counts = c.value;
          else qp.push(healthMsg.readFailed('counts', msg.textOf(c.reason)));
          if (st.status === 'fulfilled') state = st.value;
          else qp.push(healthMsg.readFailed('state', msg.textOf(st.reason)));
          if (state?.stats) {
            try {
              stats = await withTimeout(queue.stats(), timeoutMs, 'stats');
            } catch (err) {
              qp.push(healthMsg.readFailed('stats', msg.textOf(err)));
            }
          }
        }
        let bound: QueueBoundUsage | null = null;
        if (state && state.bound > 0 && counts) {
          const unfinished = counts.pending + counts.working + counts.delayed;
          bound = {
            limit: state.bound,
            unfinished,
            free: Math.max(0, state.bound - unfinished),
            usage: Math.round((unfinished / state.bound) * 1000) / 1000,
            waitingProducers: state.waitingProducers,
          };
        }
        const { maxPending, maxDead, requireWorkers } = options.health;
        let liveWorkers: number | null = null;
        if (counts && requireWorkers && counts.pending > 0) {
          try {
            liveWorkers = (await withTimeout(queue.getWorkers(), timeoutMs, 'getWorkers')).length;
            if (liveWorkers === 0) qp.push(healthMsg.noLiveWorker(counts.pending));
          } catch (err) {
            qp.push(healthMsg.readFailed('workers', msg.textOf(err)));
          }
        }
        if (counts && maxPending !== undefined && counts.pending > maxPending) qp.push(healthMsg.backlogOverLimit(counts.pending, maxPending));
        if (counts && maxDead !== undefined && counts.dead > maxDead) qp.push(healthMsg.deadOverLimit(counts.dead, maxDead));
        if (counts?.schedulersOverdue) qp.push(healthMsg.schedulersOverdue(counts.schedulersOverdue));
        const processors = runners.filter((r) => r.def.queueName === queue.name).map((r) => r.status(now));
        for (const p of processors) {
          if (p.state === 'stalled') qp.push(healthMsg.loopStalled(p.processor, now - (p.lastActivityAt ?? now)));
          else if (p.state === 'erroring') qp.push(healthMsg.loopErroring(p.processor, p.lastError));
        }
        let sweeper: QueueHealth['sweeper'] = null;
        const sw = this.registry.getSweeper(queue.name)?.status();
        if (sw) {
          let healthy = true;
          if (sw.enabled && sw.running) {
            const staleMs = this.options.health.sweeperStaleMs ?? defaultSweeperStaleMs(sw.intervalMs);
            const since = sw.lastRunAt ?? sw.startedAt ?? now;
            if (now - since > staleMs) {
              healthy = false;
              qp.push(healthMsg.sweeperStale(now - since, sw.lastError));
            }
          }
          sweeper = { ...sw, healthy };
        }
        const thresholds: QueueHealth['thresholds'] = {};
        if (maxPending !== undefined) thresholds.maxPending = maxPending;
        if (maxDead !== undefined) thresholds.maxDead = maxDead;
        if (requireWorkers) thresholds.requireWorkers = true;
        queues[queue.name] = {
          healthy: qp.length === 0,
          counts,
          closed: state ? state.closed : null,
          bound,
          stats,
          thresholds,
          liveWorkers,
          sweeper,
          processors,
          problems: qp,
        };
        for (const p of qp) problems.push(healthMsg.queueProblem(queue.name, p));
      }),
    );

    return {
      healthy: problems.length === 0,
      checkedAt: now,
      workersEnabled: this.options.workersEnabled,
      redis: pings,
      queues,
      problems,
    };
  }

  private async ping(client: RedisClient, target: string, timeoutMs: number): Promise<RedisHealth> {
    const started = performance.now();
    try {
      await withTimeout(client.ping(), timeoutMs, 'PING');
      return { target, reachable: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    } catch (err) {
      return { target, reachable: false, error: this.connection.redact(msg.textOf(err)) };
    }
  }
}
