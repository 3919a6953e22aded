import type { JobInfo, JobProgress, JobState } from '../core/management/read-types.js';

/** Longest text of a job's data or error shown in a list; the job's page shows all of it. */
const PREVIEW_CHARS = 160;

/** One row of a job list: what a table shows, with the data and error cut short. */
export interface JobSummary {
  id: string;
  name: string;
  state: JobState;
  /** The job's data as JSON, cut to 160 characters. */
  dataPreview: string;
  failures: number;
  /** Of `failures`, those before the last redrive (JobInfo.failuresBeforeRedrive). */
  failuresBeforeRedrive?: number;
  maxAttempts: number;
  createdAt: number;
  /** The time that orders its state: due (delayed), lease deadline (working), completed, died. */
  at?: number;
  lastError?: string;
  progress?: JobProgress;
  group?: string;
  priority: number;
}

/** @internal */
export function summarize(job: JobInfo<unknown, unknown>): JobSummary {
  const s: JobSummary = {
    id: job.id,
    name: job.name,
    state: job.state,
    dataPreview: cut(JSON.stringify(job.data) ?? 'undefined'),
    failures: job.failures,
    maxAttempts: job.maxAttempts,
    createdAt: job.createdAt,
    priority: job.priority,
  };
  const at = job.runAt ?? job.leaseDeadline ?? job.completedAt ?? job.diedAt;
  if (at !== undefined) s.at = at;
  if (job.failuresBeforeRedrive !== undefined) s.failuresBeforeRedrive = job.failuresBeforeRedrive;
  if (job.lastError !== undefined) s.lastError = cut(job.lastError);
  if (job.progress !== undefined) s.progress = job.progress;
  if (job.group !== undefined) s.group = job.group;
  return s;
}

function cut(text: string): string {
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}
