import type { JobMap, JobName, JobResultOf, NamedJob } from '../../core/queue/job-names.js';
import type { ProcessOptions } from './handler-options.js';
import { Process } from './process.decorator.js';

/** A handler of jobs named `N` of map `M`: takes such a job, returns (a promise of) its result. */
export type NamedProcessMethod<M extends JobMap<M>, N extends JobName<M>> = (job: NamedJob<M, N>) => JobResultOf<M, N> | Promise<JobResultOf<M, N>>;

/** `@Process(name)` whose method the compiler checks against the map. */
export type NamedProcessDecorator<M extends JobMap<M>, N extends JobName<M>> = <T extends NamedProcessMethod<M, N>>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<T>,
) => void;

/** The decorators `processorFor<M>()` gives. */
export interface TypedProcessorDecorators<M extends JobMap<M>> {
  /**
   * `@Process(name)` for a name of the map: a misspelled name, a method taking another
   * name's data or returning something else than its result does not compile.
   */
  Process<N extends JobName<M>>(jobName: N, options?: ProcessOptions): NamedProcessDecorator<M, N>;
}

/**
 * Decorators typed by a map of job name → data (and result), the same map a `NamedQueue<M>`
 * adds with: `const P = processorFor<PaymentJobs>()`, then `@P.Process('charge')` on a method
 * `(job: NamedJob<PaymentJobs, 'charge'>) => Receipt`. At run time they are `@Process(name)`.
 */
export function processorFor<M extends JobMap<M>>(): TypedProcessorDecorators<M> {
  return {
    Process: <N extends JobName<M>>(jobName: N, options?: ProcessOptions) => Process(jobName, options) as NamedProcessDecorator<M, N>,
  };
}
