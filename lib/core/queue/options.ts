import { assertConnection, commandTimeoutOf } from '../redis/connection.js';
import {
  DEFAULT_MAX_LOG_LINES,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_METRICS_KEEP_MINUTES,
  DEFAULT_PREFIX,
  DEFAULT_ROLE_TTL_MS,
  MAX_LOG_LINES,
  MAX_METRICS_MINUTES,
  MAX_PAYLOAD_LIMIT,
  MAX_TIMER_MS,
  MIN_ROLE_TTL_MS,
} from '../defaults.js';
import { ValidationError } from '../errors.js';
import { assertDurability } from '../redis/replication.js';
import { assertEvictionCheck } from '../redis/server-check.js';
import type { JobPolicy } from '../adds/types.js';
import { rateLimitSetting } from '../rate-limits/stored.js';
import { globalConcurrencySetting, groupOverridesSetting } from '../settings/concurrency.js';
import type { DurabilityOptions, EvictionCheck, QueueOptions } from './types.js';
import {
  assertBoolean,
  assertFunction,
  assertInt,
  assertOptions,
  assertPrefix,
  assertQueueName,
} from '../validate.js';
import { processWarning, type WarningHandler } from '../warnings.js';
import { isResolvedPolicy, resolvePolicy } from '../adds/job-options.js';

/**
 * The one validator of queue options, and the one place their defaults are applied (the
 * values themselves live in lib/core/defaults.ts; job options: job-options.ts). Everything is
 * checked before anything is written or connected.
 */

const QUEUE_OPTION_KEYS = [
  'connection',
  'prefix',
  'defaults',
  'maxPayloadBytes',
  'maxLogLines',
  'events',
  'evictionCheck',
  'onWarning',
  'durability',
  'bound',
  'stats',
  'metrics',
  'groupConcurrency',
  'limiter',
  'groupLimiter',
  'globalConcurrency',
  'groupOverrides',
  'exclusive',
  'checkClosed',
] as const;
const EXCLUSIVE_KEYS = ['producer', 'consumer', 'waitMs', 'ttlMs'] as const;
const METRICS_KEYS = ['keepMinutes'] as const;

/** The bounded / fair / lifecycle / exclusive / stats options, checked (lib/core/settings/queue-settings.ts). */
export interface ResolvedSettings {
  bound: number | undefined;
  stats: boolean | undefined;
  /** Minutes of metrics history kept; 0 stops keeping one. */
  metrics: number | undefined;
  groupConcurrency: number | undefined;
  /** '<max>:<durationMs>' as stored (rate-limits/limiter.lua), '0' to remove it */
  limiter: string | undefined;
  groupLimiter: string | undefined;
  /** As stored (settings/concurrency.ts): '' when not given */
  globalConcurrency: string;
  groupOverrides: string;
  exclusive: { producer: boolean; consumer: boolean; waitMs: number; ttlMs: number } | undefined;
  checkClosed: boolean | undefined;
}

/** A Queue's options, checked and with their defaults: what the constructor builds from. */
export interface ResolvedQueueOptions {
  prefix: string;
  defaults: Readonly<JobPolicy>;
  maxPayloadBytes: number;
  maxLogLines: number;
  eventsFlag: '0' | '1';
  evictionCheck: EvictionCheck;
  warn: WarningHandler;
  durability: DurabilityOptions | undefined;
  settings: ResolvedSettings;
}

/** A Queue's options, checked, with their defaults. */
export function resolveQueueOptions(name: unknown, options: QueueOptions): ResolvedQueueOptions {
  assertQueueName(name);
  assertOptions('queue options', options, QUEUE_OPTION_KEYS);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  if (options.maxPayloadBytes !== undefined) {
    assertInt('maxPayloadBytes', options.maxPayloadBytes, { min: 1, max: MAX_PAYLOAD_LIMIT });
  }
  if (options.maxLogLines !== undefined) assertInt('maxLogLines', options.maxLogLines, { min: 1, max: MAX_LOG_LINES });
  if (options.events !== undefined) assertBoolean('events', options.events);
  assertConnection('connection', options.connection);
  assertEvictionCheck(options.evictionCheck);
  if (options.onWarning !== undefined) assertFunction('onWarning', options.onWarning);
  const settings = resolveSettings(options);
  assertDurability(options.durability, commandTimeoutOf(options.connection));
  return {
    prefix,
    defaults: isResolvedPolicy(options.defaults) ? options.defaults : resolvePolicy('defaults', options.defaults),
    maxPayloadBytes: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
    maxLogLines: options.maxLogLines ?? DEFAULT_MAX_LOG_LINES,
    eventsFlag: options.events === false ? '0' : '1',
    evictionCheck: options.evictionCheck ?? 'warn',
    warn: options.onWarning ?? processWarning,
    durability: options.durability && { ...options.durability },
    settings,
  };
}

function resolveSettings(options: QueueOptions): ResolvedSettings {
  const { bound, stats, groupConcurrency, exclusive, checkClosed } = options;
  const limiter = rateLimitSetting('limiter', options.limiter);
  const groupLimiter = rateLimitSetting('groupLimiter', options.groupLimiter);
  const globalConcurrency = globalConcurrencySetting(options.globalConcurrency);
  const groupOverrides = groupOverridesSetting(options.groupOverrides);
  if (bound !== undefined) assertInt('bound', bound, { max: 2 ** 40 });
  if (stats !== undefined) assertBoolean('stats', stats);
  if (checkClosed !== undefined) assertBoolean('checkClosed', checkClosed);
  if (groupConcurrency !== undefined) assertInt('groupConcurrency', groupConcurrency, { max: 2 ** 31 });
  let resolvedExclusive: ResolvedSettings['exclusive'];
  if (exclusive !== undefined) {
    assertOptions('exclusive', exclusive, EXCLUSIVE_KEYS);
    for (const k of ['producer', 'consumer'] as const) {
      if (exclusive[k] !== undefined) assertBoolean(`exclusive.${k}`, exclusive[k]);
    }
    if (exclusive.waitMs !== undefined) assertInt('exclusive.waitMs', exclusive.waitMs, { max: MAX_TIMER_MS });
    if (exclusive.ttlMs !== undefined) assertInt('exclusive.ttlMs', exclusive.ttlMs, { min: MIN_ROLE_TTL_MS, max: MAX_TIMER_MS });
    resolvedExclusive = {
      producer: exclusive.producer === true,
      consumer: exclusive.consumer === true,
      waitMs: exclusive.waitMs ?? 0,
      ttlMs: exclusive.ttlMs ?? DEFAULT_ROLE_TTL_MS,
    };
  }
  assertCheckClosed(options);
  return { bound, stats, metrics: keepMinutesOf(options.metrics), groupConcurrency, limiter, groupLimiter, globalConcurrency, groupOverrides, exclusive: resolvedExclusive, checkClosed };
}

/** `metrics` as the minutes kept (0: none), undefined when not given. */
function keepMinutesOf(metrics: QueueOptions['metrics']): number | undefined {
  if (metrics === undefined) return undefined;
  if (typeof metrics === 'boolean') return metrics ? DEFAULT_METRICS_KEEP_MINUTES : 0;
  assertOptions('metrics', metrics, METRICS_KEYS);
  const keep = metrics.keepMinutes ?? DEFAULT_METRICS_KEEP_MINUTES;
  assertInt('metrics.keepMinutes', keep, { min: 1, max: MAX_METRICS_MINUTES });
  return keep;
}

/**
 * `checkClosed: false` asks adds to skip the queue's state, which bounded, counting and
 * exclusive-producer adds must read: refused rather than half obeyed.
 */
export function assertCheckClosed(options: Pick<QueueOptions, 'checkClosed' | 'bound' | 'stats' | 'exclusive'>): void {
  if (options.checkClosed !== false) return;
  const needs = [
    options.bound ? `bound: ${options.bound}` : '',
    options.stats ? 'stats: true' : '',
    options.exclusive?.producer ? 'exclusive.producer' : '',
  ].filter(Boolean);
  if (needs.length) {
    throw new ValidationError('checkClosed', `false contradicts ${needs.join(', ')}, whose adds always check the queue's state; leave checkClosed out`);
  }
}
