import type { LeasedJob } from '../leases/types.js';

/**
 * The propagation carrier a traced add stored with a job (record meta `tc`), kept beside
 * the leased job rather than on it, so that the public LeasedJob stays as it is. Only jobs
 * added while tracing was on have one.
 */
const carriers = new WeakMap<LeasedJob<unknown>, Readonly<Record<string, string>>>();

export function rememberTraceContext(job: LeasedJob<unknown>, carrier: Readonly<Record<string, string>>): void {
  carriers.set(job, carrier);
}

/** The carrier stored with `job` when it was added, if any. */
export function traceContextOf(job: LeasedJob<unknown>): Readonly<Record<string, string>> | undefined {
  return carriers.get(job);
}

/**
 * `record` ("<meta json>\n<data json>") with the carrier as meta `tc`, appended to the meta
 * so that its first key stays `t`.
 */
export function withTraceContext(record: string, carrier: Readonly<Record<string, string>>): string {
  const nl = record.indexOf('\n');
  return `${record.slice(0, nl - 1)},"tc":${JSON.stringify(carrier)}}${record.slice(nl)}`;
}

/** Stores `carrier` with every job of `items` (their records, before the script call). */
export function stampAll(items: Array<{ record: string }>, carrier: Readonly<Record<string, string>>): void {
  for (const it of items) it.record = withTraceContext(it.record, carrier);
}
