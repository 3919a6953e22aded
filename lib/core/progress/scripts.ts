import { queueScript, type EventsFlag } from '../redis/script-def.js';

/** Stores a leased job's progress (update-progress.lua): false when the token no longer holds the job. */
export const progressScript = queueScript({
  name: 'progress',
  file: 'progress/update-progress.lua',
  ops: ['updateProgress'],
  encode: (a: { events: EventsFlag; id: string; token: string; json: string }) => [a.events, a.id, a.token, a.json],
  decode: (reply) => reply === 1,
});

/** Appends a line to a leased job's log (log.lua): false when the token no longer holds the job. */
export const logScript = queueScript({
  name: 'log',
  file: 'progress/log.lua',
  ops: ['log'],
  encode: (a: { events: EventsFlag; id: string; token: string; writer: string; n: number; line: string; maxLines: number; fromRecord: boolean }) => [
    a.events,
    a.id,
    a.token,
    a.writer,
    a.n,
    a.line,
    a.maxLines,
    a.fromRecord ? '1' : '0',
  ],
  decode: (reply) => (reply as number) > 0,
});

/** Removes a job's log lines but its last `keep` (clear-logs.lua): how many were removed. */
export const clearLogsScript = queueScript({
  name: 'clearLogs',
  file: 'progress/clear-logs.lua',
  ops: ['clearLogs'],
  encode: (a: { id: string; keep: number }) => [a.id, a.keep],
  decode: (reply) => reply as number,
});

export const PROGRESS_SCRIPTS = [progressScript, logScript, clearLogsScript] as const;
