import { PayloadTooLargeError, ValidationError } from '../errors.js';
import type { LeasedJob, LeaseRef } from '../leases/types.js';
import { MAX_LOG_LINES } from '../defaults.js';
import type { JobProgress } from '../management/read-types.js';
import { assertInt, assertJobId, assertOptions, toJson } from '../validate.js';
import { nextLogStamp } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import { assertLease } from '../settles/settle-items.js';
import { clearLogsScript, logScript, progressScript } from './scripts.js';

/**
 * What a handler reports while it runs: its progress (update-progress.lua) and log lines
 * (log.lua), each written only by the current lease of the job, kept with the job and
 * published as events.
 */
export class ProgressWriter {
  constructor(private readonly ctx: QueueContext) {}

  /** Stores `progress` for the leased job; false when the lease no longer holds it. */
  async updateProgress(lease: LeaseRef, progress: JobProgress): Promise<boolean> {
    this.ctx.assertOpen();
    assertLease(lease);
    const json = progressJson(progress, this.ctx.maxPayloadBytes);
    return this.ctx.run(progressScript, { events: this.ctx.eventsFlag, id: lease.job.id, token: lease.token, json });
  }

  /**
   * Appends `line` to the leased job's log (the last `keepLogs` of the job, else `maxLogLines`,
   * are kept); false when the lease no longer holds the job.
   */
  async log(lease: LeaseRef, line: string): Promise<boolean> {
    this.ctx.assertOpen();
    assertLease(lease);
    assertLogLine(line, this.ctx.maxPayloadBytes);
    const [writer, n] = nextLogStamp();
    // A lease from lease() carries its job's options; one rebuilt from its id and token does
    // not, and the script reads the job's keepLogs from its record instead.
    const job = lease.job as Partial<LeasedJob<unknown>>;
    const maxLines = job.keepLogs ?? this.ctx.maxLogLines;
    const fromRecord = job.policy === undefined;
    return this.ctx.run(logScript, { events: this.ctx.eventsFlag, id: lease.job.id, token: lease.token, writer, n, line, maxLines, fromRecord });
  }

  /** Removes job `id`'s log lines but the last `keep` (default 0: all); how many were removed. */
  async clearLogs(id: string, opts: { keep?: number }): Promise<number> {
    assertJobId(id, 'id');
    assertOptions('clearLogs options', opts, ['keep']);
    const keep = opts.keep ?? 0;
    assertInt('keep', keep, { max: MAX_LOG_LINES });
    return this.ctx.run(clearLogsScript, { id, keep });
  }
}

/** A log line as log.lua stores it: a string within the payload limit (also relq/testing's job). */
export function assertLogLine(line: unknown, maxBytes: number): asserts line is string {
  if (typeof line !== 'string') throw new ValidationError('line', `must be a string, got ${typeof line}`);
  // one ceiling for what a job stores in Redis: a line is payload like any other
  if (line.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(line);
    if (bytes > maxBytes) throw new PayloadTooLargeError('line', bytes, maxBytes);
  }
}

/** Progress as update-progress.lua stores it (JSON), checked (also relq/testing's job). */
export function progressJson(progress: unknown, maxBytes: number): string {
  const isNumber = typeof progress === 'number';
  if (!isNumber && (typeof progress !== 'object' || progress === null)) {
    throw new ValidationError('progress', `must be a number, an object or an array, got ${progress === null ? 'null' : typeof progress}`);
  }
  if (isNumber && !Number.isFinite(progress)) throw new ValidationError('progress', `must be a finite number, got ${progress}`);
  return toJson('progress', progress, maxBytes);
}
