import type { Job } from '../../core/worker.js';
import type { ProcessOptions } from '../interfaces/processor-options.interface.js';
import { PROCESS_METADATA } from '../tokens.js';

/** What `@Process()` records on a method. @internal */
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

/**
 * Marks the handler of a `@Processor()` class. `@Process()` is the default handler;
 * `@Process('welcome')` handles jobs added with `{ name: 'welcome' }`. Its return value
 * completes the job (the result is stored); a throw is a failed attempt (retried with
 * backoff, dead-lettered after the last); `UnrecoverableError` or `job.reject()`
 * dead-letters at once.
 */
export function Process(options?: ProcessOptions): ProcessDecorator;
export function Process(jobName: string, options?: ProcessOptions): ProcessDecorator;
export function Process(nameOrOptions?: string | ProcessOptions, maybeOptions: ProcessOptions = {}): ProcessDecorator {
  const jobName = typeof nameOrOptions === 'string' ? nameOrOptions : undefined;
  const options = typeof nameOrOptions === 'object' && nameOrOptions !== null ? nameOrOptions : maybeOptions;
  return (target, key, descriptor) => {
    const method = descriptor.value;
    if (typeof method !== 'function') {
      throw new TypeError(`@Process() must decorate a method; ${describeMember(target, key)} is not one`);
    }
    if (Reflect.hasOwnMetadata(PROCESS_METADATA, method)) {
      throw new TypeError(`${describeMember(target, key)} has more than one @Process(); use one method per job name`);
    }
    const meta: ProcessMetadata = { jobName, options };
    Reflect.defineMetadata(PROCESS_METADATA, meta, method);
  };
}

function describeMember(target: object, key: string | symbol): string {
  const cls = (target as { constructor?: { name?: string } }).constructor?.name ?? 'class';
  return `${cls}.${String(key)}`;
}
