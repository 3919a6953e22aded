/** Something an operator should look at that does not stop the queue. */
export interface RelqWarning {
  /**
   * - `RELQ_EVICTION_POLICY`: Redis may evict keys (maxmemory-policy is not noeviction), which loses jobs
   * - `RELQ_GHOST_JOBS`: queued ids whose job record was gone (evicted or deleted outside relq) were dropped
   * - `RELQ_EVENTS_RETRY`: the event stream (`events()`, `watch()`), or the workers' cancel notices, could not subscribe and keeps trying; then that it is back
   * - `RELQ_REGISTRY_NOPERM`: the ACL user may not write the registry of queue names, so `listQueues()` misses the queue (the queue itself works)
   * - `RELQ_LIBRARY_MISMATCH`: a function library under relq's name (or one registering relq's function names) holds other code; relq never calls it and runs scripts instead
   * - `RELQ_BACKOFF_STRATEGY`: a job's backoff names a strategy the worker does not have (or it threw, or answered no delay); the job retries with the built-in backoff
   * - `RELQ_PARTITION_AWAY`: a worker's call on one partition of a partitioned queue failed (its master away or failing over); the worker leases from the others and tries it again after a back-off
   */
  code:
    | 'RELQ_EVICTION_POLICY'
    | 'RELQ_GHOST_JOBS'
    | 'RELQ_EVENTS_RETRY'
    | 'RELQ_REGISTRY_NOPERM'
    | 'RELQ_LIBRARY_MISMATCH'
    | 'RELQ_BACKOFF_STRATEGY'
    | 'RELQ_PARTITION_AWAY';
  queue: string;
  message: string;
}

export type WarningHandler = (warning: RelqWarning) => void;

/** Without a handler, warnings are Node process warnings (printed to stderr once each). */
export const processWarning: WarningHandler = (w) => {
  process.emitWarning(w.message, { type: 'RelqWarning', code: w.code });
};
