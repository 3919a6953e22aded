import type { IncomingMessage } from 'node:http';
import type { Queue } from '../core/queue/queue.js';
import { ValidationError } from '../core/errors.js';
import { assertFunction, assertInt, assertOptions, assertQueueName, describe } from '../core/validate.js';

/** What a request asks for: a read (page, lists, counts) or an action (retry, remove, pause...). */
export interface DashboardAccess {
  kind: 'read' | 'action';
  /** The queue the request is about, when it names one. */
  queue?: string;
  /** The action's name ('retry', 'remove', 'promote', 'pause', 'resume', 'redrive', 'clean'). */
  action?: string;
}

/**
 * Decides whether a request may go on; false answers 403. Called for every request (reads
 * too: return true for `access.kind === 'read'` to leave reads open). A throw answers 500.
 */
export type DashboardGuard = (req: IncomingMessage, access: DashboardAccess) => boolean | Promise<boolean>;

export interface DashboardOptions {
  /** The queues to show, listed in this order; names must be distinct. */
  queues: ReadonlyArray<Queue<unknown, unknown>>;
  /** The path the dashboard answers under, e.g. '/queues' (default '/'). */
  basePath?: string;
  /**
   * Who may read and act. Without a guard, reads are open and every action is refused (403):
   * an action needs a guard that allows it.
   */
  guard?: DashboardGuard;
  /** Throughput chart: length of one interval (default 10 000 ms) and intervals kept (default 360: one hour). */
  throughput?: { intervalMs?: number; points?: number };
  /** How often the page polls for fresh data (default 2000 ms). */
  refreshMs?: number;
}

/** @internal */
export interface ResolvedDashboardOptions {
  queues: Map<string, Queue<unknown, unknown>>;
  basePath: string;
  guard: DashboardGuard | undefined;
  intervalMs: number;
  points: number;
  refreshMs: number;
}

/** Checks the options before anything subscribes or listens. @internal */
export function resolveDashboardOptions(o: DashboardOptions): ResolvedDashboardOptions {
  assertOptions('dashboard options', o, ['queues', 'basePath', 'guard', 'throughput', 'refreshMs']);
  if (!Array.isArray(o.queues) || o.queues.length === 0) throw new ValidationError('queues', 'must be a non-empty array of Queue objects');
  const queues = new Map<string, Queue<unknown, unknown>>();
  for (const q of o.queues) {
    assertQueueName(q?.name, 'queues[].name');
    if (queues.has(q.name)) throw new ValidationError('queues', `queue '${q.name}' is listed twice`);
    queues.set(q.name, q);
  }
  if (o.guard !== undefined) assertFunction('guard', o.guard);
  const t = o.throughput ?? {};
  assertOptions('throughput', t, ['intervalMs', 'points']);
  const intervalMs = t.intervalMs ?? 10_000;
  const points = t.points ?? 360;
  assertInt('throughput.intervalMs', intervalMs, { min: 100, max: 86_400_000 });
  assertInt('throughput.points', points, { min: 2, max: 10_000 });
  const refreshMs = o.refreshMs ?? 2000;
  assertInt('refreshMs', refreshMs, { min: 100, max: 3_600_000 });
  return { queues, basePath: normalizeBasePath(o.basePath ?? '/'), guard: o.guard, intervalMs, points, refreshMs };
}

/** '/queues/' and 'queues' become '/queues'; '/' becomes ''. `field` names it in the error. @internal */
export function normalizeBasePath(path: unknown, field = 'basePath'): string {
  if (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path)) {
    throw new ValidationError(field, `must be a URL path of letters, digits and . _ ~ - / (e.g. "/queues"), got ${describe(path)}`);
  }
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
