import type { JobPolicy } from '../adds/types.js';

/** What a lease holder knows of its job. */
export interface LeasedJob<Data> {
  readonly id: string;
  readonly name: string;
  readonly data: Data;
  /** 1 for the first delivery; failures so far + 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly requeues: number;
  readonly createdAt: number;
  readonly leasedAt: number;
  readonly lastError?: string;
  readonly policy: Readonly<JobPolicy>;
  /** The job's fairness group, if it has one. */
  readonly group?: string;
  /** Its own `keepLogs` (log lines kept), if it was added with one. */
  readonly keepLogs?: number;
  /** A flow's child (docs/flows.md): its parent's id and queue (BullMQ's `job.parent`). */
  readonly parent?: JobParent;
}

/** The parent of a flow's child: its id and the name of its queue. */
export interface JobParent {
  readonly id: string;
  readonly queue: string;
}

/** A fenced claim on one job: only this token can ack, nack, requeue, reject or touch it. */
export interface Lease<Data> {
  readonly job: LeasedJob<Data>;
  readonly token: string;
  /** Epoch ms (Redis clock) when the lease runs out unless touched. */
  deadline: number;
  /** The length the lease was granted for; touch() without extendMs extends by it. */
  readonly leaseMs: number;
}

/**
 * What settling and touching need of a lease: its job id and token. A lease kept elsewhere
 * (e.g. handed to another process) can be rebuilt from these two and settles exactly like the
 * original: retention and backoff are read from the stored job.
 */
export interface LeaseRef {
  readonly job: { readonly id: string };
  readonly token: string;
  /** Updated by touch(). */
  deadline?: number;
  /** touch() without extendMs extends by this; a rebuilt lease without it must give extendMs. */
  readonly leaseMs?: number;
}

export interface LeaseOptions {
  /** Most jobs to lease at once (1 to 1000). Default 1. */
  count?: number;
  /** Lease length for jobs without their own leaseMs. Default 30 s. */
  leaseMs?: number;
  /** Wait up to this long when nothing is pending. Default 0 (return at once). */
  blockMs?: number;
}
