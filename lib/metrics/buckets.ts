// Default histogram buckets of relq/metrics (RelqMetricsOptions waitBuckets / processingBuckets).

/** Seconds a job waits, from a few milliseconds to an hour. */
export const DEFAULT_WAIT_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]);
/** Seconds a handler runs. */
export const DEFAULT_PROCESSING_BUCKETS: readonly number[] = Object.freeze([0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]);
