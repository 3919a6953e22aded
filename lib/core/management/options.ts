import { DEFAULT_CANCEL_OUTCOME, DEFAULT_CLEAN_LIMIT, DEFAULT_PAGE_SIZE, MAX_ERROR_TEXT, MAX_MANAGED, MAX_MS, MAX_PRIORITY } from '../defaults.js';
import { ValidationError } from '../errors.js';
import type { JobState } from './read-types.js';
import type { CancelOptions, CleanOptions, CleanState, DeadLetterFilter, JobOrder, JobPage } from './types.js';
import { assertInt, assertOptions, assertString, describe } from '../validate.js';

/**
 * The one validator of the job-management calls' arguments (management.ts, and the dead
 * letters' filter of inspector.ts), with their defaults. Everything is checked before a
 * script runs.
 */

export const JOB_STATES: readonly JobState[] = ['pending', 'working', 'delayed', 'completed', 'dead', 'waiting-children'];
const CLEAN_STATES: readonly CleanState[] = ['completed', 'dead'];
const ORDERS: readonly JobOrder[] = ['asc', 'desc'];
const CANCEL_OUTCOMES: ReadonlyArray<NonNullable<CancelOptions['outcome']>> = ['dead', 'retry'];

function assertOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (!allowed.includes(value as T)) {
    throw new ValidationError(field, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(value)}`);
  }
}

function checkJobState(value: unknown): asserts value is JobState {
  assertOneOf('state', value, JOB_STATES);
}

/** The states of a getJobs call: one state, or a non-empty array of distinct states. */
export function checkJobStates(value: unknown): readonly JobState[] {
  if (!Array.isArray(value)) {
    checkJobState(value);
    return [value];
  }
  if (value.length === 0) throw new ValidationError('states', 'must name at least one state');
  value.forEach((state, i) => assertOneOf(`states[${i}]`, state, JOB_STATES));
  const first = value.findIndex((state, i) => value.indexOf(state) !== i);
  if (first >= 0) throw new ValidationError(`states[${first}]`, `names '${String(value[first])}' a second time`);
  return value as JobState[];
}

/** The priorities of getCountsPerPriority: an array of job priorities (-1000 to 1000). */
export function checkPriorities(value: unknown): asserts value is readonly number[] {
  if (!Array.isArray(value)) throw new ValidationError('priorities', `must be an array of priorities, got ${describe(value)}`);
  if (value.length > MAX_MANAGED) throw new ValidationError('priorities', `must hold at most ${MAX_MANAGED} priorities, got ${value.length}`);
  value.forEach((p, i) => assertInt(`priorities[${i}]`, p, { min: -MAX_PRIORITY, max: MAX_PRIORITY }));
}

export function resolvePage(page: JobPage): Required<JobPage> {
  assertOptions('getJobs options', page, ['start', 'end', 'order']);
  const start = page.start ?? 0;
  assertInt('start', start, { max: 2 ** 40 });
  const end = page.end ?? start + DEFAULT_PAGE_SIZE - 1;
  assertInt('end', end, { min: start, max: start + MAX_MANAGED - 1 });
  const order = page.order ?? 'asc';
  assertOneOf('order', order, ORDERS);
  return { start, end, order };
}

export function resolveClean(state: unknown, opts: CleanOptions): { state: CleanState; olderThanMs: number; limit: number } {
  assertOneOf('state', state, CLEAN_STATES);
  assertOptions('clean options', opts, ['olderThanMs', 'limit']);
  const olderThanMs = opts.olderThanMs ?? 0;
  checkOlderThan(olderThanMs);
  const limit = opts.limit ?? DEFAULT_CLEAN_LIMIT;
  checkLimit(limit);
  return { state, olderThanMs, limit };
}

export function resolveCancel(opts: CancelOptions): Required<CancelOptions> {
  assertOptions('cancel options', opts, ['outcome', 'reason']);
  const outcome = opts.outcome ?? DEFAULT_CANCEL_OUTCOME;
  assertOneOf('outcome', outcome, CANCEL_OUTCOMES);
  const reason = opts.reason ?? '';
  assertString('reason', reason, MAX_ERROR_TEXT); // it goes into the job's error text
  return { outcome, reason };
}

/** The filter of retryDead / purgeDead, checked. */
export function checkDeadFilter(op: string, filter: DeadLetterFilter): void {
  assertOptions(`${op} filter`, filter, ['limit', 'name', 'olderThanMs']);
  checkLimit(filter.limit);
  if (filter.name !== undefined) assertString('name', filter.name, 128); // as a job's name (options.ts)
  if (filter.olderThanMs !== undefined) checkOlderThan(filter.olderThanMs);
}

function checkOlderThan(value: unknown): void {
  assertInt('olderThanMs', value, { max: MAX_MS });
}

function checkLimit(value: unknown): void {
  assertInt('limit', value, { min: 1, max: MAX_MANAGED });
}
