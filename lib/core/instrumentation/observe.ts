/*
 * The engine's side of the hook: each call asks every registered instrument and combines
 * their answers. Callers check `instruments.length` first, so that nothing here runs (or
 * allocates) while none is registered. An instrument that throws never breaks a job: its
 * error is a process warning, and the handler still runs exactly once (guardedRun).
 */
import type { LeasedJob } from '../leases/types.js';
import type { MovedTo } from '../worker/job-view.js';
import type { SweepResult } from '../management/read-types.js';
import { messageOf } from '../thrown.js';
import { instruments, type AddInfo, type AddScope, type JobOutcome, type ProcessScope } from './instruments.js';

function warn(what: string, error: unknown): void {
  process.emitWarning(`relq instrumentation failed in ${what}: ${messageOf(error)}`, { type: 'RelqWarning', code: 'RELQ_INSTRUMENTATION' });
}

function guarded(what: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    warn(what, error);
  }
}

/**
 * `scope.run(handler)`, with the handler run exactly once and its outcome kept whatever the
 * instrument does: a throw (or a return) before the handler runs it bare, a throw after it
 * keeps its result or its error, a second call gets the first one's. Only a synchronous
 * throw of the instrument is caught: what `run` returns is taken as the handler's.
 */
function guardedRun<T>(scope: ProcessScope, handler: () => T): T {
  let ran: { value: T } | { error: unknown } | undefined;
  const once = (): T => {
    if (!ran) {
      try {
        ran = { value: handler() };
      } catch (error) {
        ran = { error };
      }
    }
    if ('error' in ran) throw ran.error;
    return ran.value;
  };
  try {
    const value = scope.run(once);
    if (ran && 'value' in ran) return value;
    if (!ran) warn('process', new Error('the instrument did not run the handler'));
  } catch (error) {
    if (ran && 'error' in ran && error === ran.error) throw error;
    warn('process', error);
  }
  return once();
}

export function observeAdd(info: AddInfo): AddScope | undefined {
  const scopes: AddScope[] = [];
  for (const instrument of instruments) guarded('add', () => {
    const scope = instrument.add?.(info);
    if (scope) scopes.push(scope);
  });
  if (scopes.length === 0) return undefined;
  return {
    traceContext: scopes.find((s) => s.traceContext)?.traceContext,
    end: (created, error) => {
      for (const scope of scopes) guarded('add', () => scope.end(created, error));
    },
  };
}

/**
 * Runs `send`, the script call of an add, inside the instruments' add scope: the trace carrier
 * (when one is given) goes to `stamp`, to be stored with each job, before the call; the scope
 * ends with the created flag of each of `info.ids` (`created`) or the call's error.
 */
export async function observedAdd<T>(
  info: AddInfo,
  stamp: (carrier: Readonly<Record<string, string>>) => void,
  send: () => Promise<T>,
  created: (result: T) => readonly boolean[],
): Promise<T> {
  const observed = observeAdd(info);
  if (!observed) return send();
  const carrier = observed.traceContext;
  if (carrier && Object.keys(carrier).length > 0) stamp(carrier);
  let result: T;
  try {
    result = await send();
  } catch (error) {
    observed.end(undefined, error);
    throw error;
  }
  observed.end(created(result));
  return result;
}

export function observeProcess(queue: string, jobs: ReadonlyArray<LeasedJob<unknown>>): ProcessScope | undefined {
  const scopes: ProcessScope[] = [];
  for (const instrument of instruments) guarded('process', () => {
    const scope = instrument.process?.(queue, jobs);
    if (scope) scopes.push(scope);
  });
  if (scopes.length === 0) return undefined;
  return {
    // the first instrument's context is the outermost
    run: <T>(handler: () => T): T => scopes.reduceRight<() => T>((inner, scope) => () => guardedRun(scope, inner), handler)(),
    end: (outcomes) => {
      for (const scope of scopes) guarded('process', () => scope.end(outcomes));
    },
  };
}

export function observeSweep(queue: string, result: SweepResult): void {
  for (const instrument of instruments) guarded('sweep', () => instrument.sweep?.(queue, result));
}

/**
 * A worker's outcome as instruments see it: `event` is the WorkerEvent the outcome will report
 * once settled (none for a job given back unstarted); `held` says whether its lease was lost
 * first, or its handler moved the job to the delayed set (nothing settled then).
 */
export function jobOutcome(
  event: { readonly type: string; readonly willRetry?: boolean; readonly error?: unknown } | undefined,
  held: { readonly lost: boolean; readonly moved: MovedTo | false; readonly cancelled: unknown },
): JobOutcome {
  if (held.lost) return { kind: held.cancelled ? 'cancelled' : 'lost' };
  if (held.moved) return { kind: held.moved };
  switch (event?.type) {
    case 'completed':
      return { kind: 'completed' };
    case 'failed':
      return { kind: event.willRetry === false ? 'dead' : 'retried', error: event.error };
    case 'dead':
      return { kind: 'dead', error: event.error };
    case 'rateLimited':
      return { kind: 'rate-limited' };
    default:
      return { kind: 'given-back' };
  }
}
