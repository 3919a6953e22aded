import { ValidationError } from '../../core/errors.js';
import { checkSpec } from '../../core/schedulers/spec.js';
import type { SchedulerSpec, SchedulerTemplate } from '../../core/schedulers/types.js';
import { assertBoolean, assertInt, assertJobId, assertOptions } from '../../core/validate.js';
import { MAX_TIMER_MS } from '../../core/defaults.js';
import { optionKeys } from '../option-keys.js';

/** One job scheduler declared for a queue (`registerQueue({ schedulers })` or `@Scheduled()`). */
export interface SchedulerDeclaration {
  id: string;
  spec: SchedulerSpec;
  template?: SchedulerTemplate;
}

/** How a registered queue's schedulers are kept (`registerQueue({ schedulerOptions })`). */
export interface QueueSchedulerOptions {
  /**
   * Remove at startup the schedulers stored in Redis that this app does not declare (in
   * `schedulers` or with `@Scheduled()`). Default false: schedulers upserted elsewhere stay.
   */
  removeUndeclared?: boolean;
  /**
   * Run a scheduler ticker for this queue in this app (safe from many instances). Default: when
   * the app declares schedulers for the queue; a queue without any costs nothing. Set true for
   * a queue whose schedulers are upserted elsewhere.
   */
  tick?: boolean;
  /** Longest wait between ticks (how soon schedulers upserted elsewhere are seen). Default 1 000. */
  maxIntervalMs?: number;
}

export type ResolvedSchedulerOptions = Required<Omit<QueueSchedulerOptions, 'tick'>> & Pick<QueueSchedulerOptions, 'tick'>;

const DECLARATION_KEYS = optionKeys<SchedulerDeclaration>({ id: true, spec: true, template: true });
const OPTION_KEYS = optionKeys<QueueSchedulerOptions>({ removeUndeclared: true, tick: true, maxIntervalMs: true });

/** Checks declarations (ids, unique, and specs; templates are checked by the queue at upsert). */
export function checkSchedulers(field: string, list: unknown): SchedulerDeclaration[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new ValidationError(field, 'must be an array of { id, spec, template? }');
  const seen = new Set<string>();
  return list.map((d: unknown, i) => {
    assertOptions(`${field}[${i}]`, d, DECLARATION_KEYS);
    assertJobId(d.id, `${field}[${i}].id`);
    if (seen.has(d.id)) throw new ValidationError(`${field}[${i}].id`, `'${d.id}' is declared twice`);
    seen.add(d.id);
    checkSpec(`${field}[${i}].spec`, d.spec);
    return d as unknown as SchedulerDeclaration;
  });
}

export function resolveSchedulerOptions(o: QueueSchedulerOptions | undefined): ResolvedSchedulerOptions {
  const out: ResolvedSchedulerOptions = { removeUndeclared: false, maxIntervalMs: 1000 };
  if (o === undefined) return out;
  assertOptions('schedulerOptions', o, OPTION_KEYS);
  if (o.removeUndeclared !== undefined) assertBoolean('schedulerOptions.removeUndeclared', o.removeUndeclared);
  if (o.tick !== undefined) assertBoolean('schedulerOptions.tick', o.tick);
  if (o.maxIntervalMs !== undefined) assertInt('schedulerOptions.maxIntervalMs', o.maxIntervalMs, { min: 10, max: MAX_TIMER_MS });
  return { ...out, ...o };
}
