import type { Job } from '../worker/job-view.js';

/** What jobs of one name carry: their data and, optionally, what their handler returns. */
export interface JobSpec {
  data: unknown;
  result?: unknown;
}

/**
 * A map of job name → `JobSpec`, as an interface or a type:
 * `interface PaymentJobs { charge: { data: Charge; result: Receipt }; refund: { data: Refund } }`.
 * `M extends JobMap<M>` accepts interfaces, which have no index signature.
 */
export type JobMap<M> = { [N in keyof M]: JobSpec };

/** The job names of a map. */
export type JobName<M> = keyof M & string;

/** The data of jobs named `N` (any name of the map when `N` is left out). */
export type JobDataOf<M extends JobMap<M>, N extends JobName<M> = JobName<M>> = M[N]['data'];

/** What the handler of jobs named `N` returns (`unknown` when the map says nothing). */
export type JobResultOf<M extends JobMap<M>, N extends JobName<M> = JobName<M>> = { [K in N]: M[K] extends { result: infer R } ? R : unknown }[N];

/**
 * A job of the map by its name: `NamedJob<PaymentJobs, 'charge'>` has `name: 'charge'` and
 * `data: Charge`; `NamedJob<PaymentJobs>` is the union of every name's, so a
 * `switch (job.name)` narrows `job.data`.
 */
export type NamedJob<M extends JobMap<M>, N extends JobName<M> = JobName<M>> = { [K in N]: Job<M[K]['data']> & { readonly name: K } }[N];
