/*
 * What a sandboxed handler's child and the worker say to each other. Both directions use
 * structured clone (a thread's postMessage, a process's IPC with 'advanced' serialization),
 * so what crosses is the same in both kinds of child.
 */
import type { JobPolicy } from '../../adds/types.js';
import type { JobParent } from '../../leases/types.js';

/** Anything thrown, made cloneable: an Error's parts (its class stays behind), or the value itself. */
export type PackedThrown =
  | {
      error: {
        name: string;
        message: string;
        stack: string | undefined;
        /** Its own enumerable fields that clone (`code`, RateLimitError's `delayMs` and `scope`, ...). */
        props: Record<string, unknown>;
        cause?: PackedThrown;
      };
    }
  | { value: unknown };

/** The job's fields, as the child's handler sees them. */
export interface SandboxJobFields {
  id: string;
  name: string;
  data: unknown;
  attempt: number;
  maxAttempts: number;
  priority: number;
  requeues: number;
  createdAt: number;
  leasedAt: number;
  lastError?: string;
  policy: Readonly<JobPolicy>;
  group?: string;
  parent?: JobParent;
  /** As at the start of the attempt (the worker's heartbeat moves it on). */
  deadline: number;
}

/** The job calls a child's handler makes through the worker (the parent's JobView runs them). */
export type JobMethod =
  | 'touch'
  | 'updateProgress'
  | 'log'
  | 'updateData'
  | 'moveToDelayed'
  | 'snooze'
  | 'childrenResults'
  | 'addChildren'
  | 'waitForChildren';

export type ToChild =
  /** Runs the handler on a job; `run` numbers the jobs of this child. */
  | { t: 'run'; run: number; job: SandboxJobFields }
  /** The job's signal aborted with `reason`. */
  | { t: 'abort'; run: number; reason: PackedThrown }
  /** The answer to a job call. */
  | { t: 'reply'; call: number; ok: true; value: unknown }
  | { t: 'reply'; call: number; ok: false; error: PackedThrown };

export type FromChild =
  /** The handler file is loaded: the child takes jobs. */
  | { t: 'ready' }
  /** The handler file could not be loaded, or exports no function: the child ends. */
  | { t: 'unusable'; error: PackedThrown }
  | { t: 'done'; run: number; result: unknown }
  | { t: 'failed'; run: number; error: PackedThrown }
  | { t: 'call'; run: number; call: number; method: JobMethod; args: unknown[] }
  /** An uncaught exception or rejection (a process child; a thread's reaches its 'error' event): the child ends. */
  | { t: 'crashed'; error: PackedThrown };
