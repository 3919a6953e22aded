import { PayloadTooLargeError, ValidationError } from '../errors.js';
import type { LeaseRef } from '../leases/types.js';
import type { JobProgress } from '../management/read-types.js';
import { toJson } from '../validate.js';
import { nextLogStamp } from '../adds/ids.js';
import type { QueueContext } from '../queue/queue-context.js';
import { assertLease } from '../settles/settle-items.js';
import { logScript, progressScript } from './scripts.js';

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
   * Appends `line` to the leased job's log (the last `maxLogLines` are kept); false when the
   * lease no longer holds the job.
   */
  async log(lease: LeaseRef, line: string): Promise<boolean> {
    this.ctx.assertOpen();
    assertLease(lease);
    assertLogLine(line, this.ctx.maxPayloadBytes);
    const [writer, n] = nextLogStamp();
    const { eventsFlag: events, maxLogLines: maxLines } = this.ctx;
    return this.ctx.run(logScript, { events, id: lease.job.id, token: lease.token, writer, n, line, maxLines });
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
