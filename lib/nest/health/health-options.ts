import { MAX_TIMER_MS } from '../../core/defaults.js';
import { assertBoolean, assertInt, assertOptions } from '../../core/validate.js';
import { DEFAULT_HEALTH_TIMEOUT_MS } from '../defaults.js';
import { optionKeys } from '../option-keys.js';

/** Limits above which the health check reports a queue down. */
export interface HealthThresholds {
  /** Most pending jobs (backlog) considered healthy. Default: no limit. */
  maxPending?: number;
  /** Most dead letters considered healthy. Default: no limit. */
  maxDead?: number;
  /**
   * Jobs pending and no live worker of the queue in any process (`queue.getWorkers()`) is a
   * problem. Default false: a queue served only by workers that run now and then (a batch
   * job, a scale-to-zero fleet) would always be reported. Costs one read per check, made
   * only while jobs are pending.
   */
  requireWorkers?: boolean;
}

export interface HealthOptions extends HealthThresholds {
  /** Redis PING time limit. Default 2 000. */
  timeoutMs?: number;
  /** A lease loop that has neither made progress nor started a wait for this long is wedged. Default blockMs + 10 000. */
  loopStallMs?: number;
  /** A sweeper whose last successful run is older than this is down. Default 3 × intervalMs + 5 000. */
  sweeperStaleMs?: number;
}

/** The root's health options; the two time limits left out keep their per-loop / per-sweeper defaults. */
export interface ResolvedHealth extends HealthOptions {
  timeoutMs: number;
}

const HEALTH_KEYS = optionKeys<HealthOptions>({ timeoutMs: true, maxPending: true, maxDead: true, requireWorkers: true, loopStallMs: true, sweeperStaleMs: true });
const THRESHOLD_KEYS = optionKeys<HealthThresholds>({ maxPending: true, maxDead: true, requireWorkers: true });

/** `health` of forRoot. */
export function resolveHealth(h: HealthOptions | undefined): ResolvedHealth {
  const out: ResolvedHealth = { timeoutMs: DEFAULT_HEALTH_TIMEOUT_MS };
  if (h === undefined) return out;
  assertOptions('health', h, HEALTH_KEYS);
  for (const key of ['timeoutMs', 'loopStallMs', 'sweeperStaleMs'] as const) {
    const v = h[key];
    if (v !== undefined) {
      assertInt(`health.${key}`, v, { min: 1, max: MAX_TIMER_MS });
      out[key] = v;
    }
  }
  return { ...out, ...checkThresholds(h) };
}

/** `health` of registerQueue: its thresholds over the root's. */
export function resolveThresholds(h: HealthThresholds | undefined, root: HealthThresholds): HealthThresholds {
  const base: HealthThresholds = { maxPending: root.maxPending, maxDead: root.maxDead, requireWorkers: root.requireWorkers };
  if (h === undefined) return base;
  assertOptions('health', h, THRESHOLD_KEYS);
  return { ...base, ...checkThresholds(h) };
}

function checkThresholds(t: HealthThresholds): HealthThresholds {
  const out: HealthThresholds = {};
  for (const key of ['maxPending', 'maxDead'] as const) {
    const v = t[key];
    if (v !== undefined) {
      assertInt(`health.${key}`, v);
      out[key] = v;
    }
  }
  if (t.requireWorkers !== undefined) {
    assertBoolean('health.requireWorkers', t.requireWorkers);
    out.requireWorkers = t.requireWorkers;
  }
  return out;
}
