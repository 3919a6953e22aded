import { DEFAULT_CANCEL_OUTCOME, DEFAULT_CLEAN_LIMIT, DEFAULT_PAGE_SIZE, MAX_ERROR_TEXT, MAX_MANAGED, MAX_MS } from '../defaults.js';
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

export function checkJobState(value: unknown): asserts value is JobState {
  assertOneOf('state', value, JOB_STATES);
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
