import type { Job } from '../../core/worker/worker.js';
import type { BatchOutcome } from '../../core/worker/batch-worker.js';
import type { BatchProcessOptions, ProcessOptions } from './handler-options.js';
import { RelqConfigError } from '../errors.js';
import { PROCESS_METADATA } from '../relq.constants.js';

/** What `@Process()` records on a method. */
export interface ProcessMetadata {
  /** undefined: the default handler. */
  jobName: string | undefined;
  options: ProcessOptions;
}

/** A method that takes the job and returns (a promise of) the result. */
export type ProcessMethod = (job: Job<never>) => unknown;

export type ProcessDecorator = <M extends ProcessMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/** What a batch handler returns: nothing (all completed), or one outcome per job, in order. */
export type BatchProcessResult = ReadonlyArray<BatchOutcome<unknown>> | void | undefined;

/** A batch method: takes the jobs of one batch. */
export type BatchProcessMethod = (jobs: Array<Job<never>>) => BatchProcessResult | Promise<BatchProcessResult>;

export type BatchProcessDecorator = <M extends BatchProcessMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/** `@Process()` options of a batch handler. */
export type BatchProcessOptionsArg = ProcessOptions & { batch: BatchProcessOptions };

/**
 * Marks the handler of a `@Processor()` class. `@Process()` is the default handler;
 * `@Process('welcome')` handles jobs added with `{ name: 'welcome' }`. Its return value
 * completes the job (the result is stored); a throw is a failed attempt (retried with
 * backoff, dead-lettered after the last); `UnrecoverableError` or `job.reject()`
 * dead-letters at once.
 *
 * `@Process({ batch: { size, waitMs } })` (optionally with a name) is a batch handler: the
 * method gets `Job[]` and returns nothing or one `{ ok: true, result? }` /
 * `{ ok: false, error?, retry? }` per job; a throw fails them all. It must be the only
 * `@Process()` method of its class.
 */
export function Process(options: BatchProcessOptionsArg): BatchProcessDecorator;
export function Process(jobName: string, options: BatchProcessOptionsArg): BatchProcessDecorator;
export function Process(options?: ProcessOptions): ProcessDecorator;
export function Process(jobName: string, options?: ProcessOptions): ProcessDecorator;
export function Process(
  nameOrOptions?: string | ProcessOptions,
  maybeOptions: ProcessOptions = {},
): ProcessDecorator & BatchProcessDecorator {
  const jobName = typeof nameOrOptions === 'string' ? nameOrOptions : undefined;
  const options = typeof nameOrOptions === 'object' && nameOrOptions !== null ? nameOrOptions : maybeOptions;
  const decorator = (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const method: unknown = descriptor.value;
    if (typeof method !== 'function') {
      throw new RelqConfigError(`@Process() must decorate a method; ${describeMember(target, key)} is not one`);
    }
    if (Reflect.hasOwnMetadata(PROCESS_METADATA, method)) {
      throw new RelqConfigError(`${describeMember(target, key)} has more than one @Process(); use one method per job name`);
    }
    const meta: ProcessMetadata = { jobName, options };
    Reflect.defineMetadata(PROCESS_METADATA, meta, method);
  };
  return decorator as ProcessDecorator & BatchProcessDecorator;
}

function describeMember(target: object, key: string | symbol): string {
  const cls = (target as { constructor?: { name?: string } }).constructor?.name ?? 'class';
  return `${cls}.${String(key)}`;
}
