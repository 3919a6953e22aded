// Defaults and limits of what only the dashboard has; the engine's live in lib/core/defaults.ts.

/** `throughput.intervalMs`: length of one interval of the throughput chart. */
export const DEFAULT_THROUGHPUT_INTERVAL_MS = 10_000;
/** `throughput.points`: intervals kept (360 of 10 s: one hour). */
export const DEFAULT_THROUGHPUT_POINTS = 360;
/** `refreshMs`: how often the page polls for fresh data. */
export const DEFAULT_REFRESH_MS = 2000;
/** Largest page of jobs the API hands out. */
export const MAX_PAGE = 500;
/** Largest action body read (actions carry a few small fields). */
export const MAX_BODY_BYTES = 16 * 1024;
