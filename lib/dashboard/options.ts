import type { AnyQueue } from '../core/queue/any-queue.js';
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '../core/errors.js';
import { assertBoolean, assertFunction, assertInt, assertOptions, assertQueueName, assertString, describe } from '../core/validate.js';
import { DEFAULT_REFRESH_MS, DEFAULT_THROUGHPUT_INTERVAL_MS, DEFAULT_THROUGHPUT_POINTS } from './defaults.js';

/** What a request asks for: a read (page, lists, counts) or an action (retry, remove, pause...). */
export interface DashboardAccess {
  kind: 'read' | 'action';
  /** The queue the request is about, when it names one. */
  queue?: string;
  /** The action's name ('retry', 'remove', 'promote', 'pause', 'resume', 'redrive', 'clean'). */
  action?: string;
}

/**
 * Decides whether a request may go on; false answers 403 (401 for a read with `challenge`).
 * Called for every request whose Host is allowed (reads too: return true for
 * `access.kind === 'read'` to leave reads open). A throw answers 500.
 */
export type DashboardGuard = (req: IncomingMessage, access: DashboardAccess) => boolean | Promise<boolean>;

export interface DashboardOptions {
  /** The queues to show, listed in this order; names must be distinct. */
  queues: ReadonlyArray<AnyQueue>;
  /** The path the dashboard answers under, e.g. '/queues' (default '/'). */
  basePath?: string;
  /**
   * Who may read and act. Without a guard, reads are answered only to requests from this
   * machine (see `publicReads`) and every action is refused (403): an action needs a guard
   * that allows it.
   */
  guard?: DashboardGuard;
  /**
   * Without a guard: answer reads (job data and results included) to anyone who reaches the
   * dashboard, not only to requests from this machine. Actions stay refused. Not with a guard,
   * which decides reads itself.
   */
  publicReads?: boolean;
  /**
   * With a guard: the `WWW-Authenticate` value of a refused read, which then answers 401 so that
   * a browser asks for credentials, e.g. 'Basic realm="relq dashboard", charset="UTF-8"'.
   * A refused action still answers 403.
   */
  challenge?: string;
  /**
   * Host names the dashboard answers to besides localhost (and its subdomains) and IP addresses,
   * e.g. ['queues.example.com'] or ['.example.com'] for a domain and its subdomains. A request
   * whose Host header names another host is refused (403), so that a page of another site
   * cannot reach the dashboard through a DNS name rebound to its address.
   */
  allowedHosts?: readonly string[];
  /** Receives the start-up line that says who may use the dashboard, when it is not a guard. Default: a Node process warning. */
  onWarning?: (message: string) => void;
  /** Throughput chart: length of one interval (default 10 000 ms) and intervals kept (default 360: one hour). */
  throughput?: { intervalMs?: number; points?: number };
  /** How often the page polls for fresh data (default 2000 ms). */
  refreshMs?: number;
}

/** Every option createDashboard takes (the Nest module's own are checked against these). @internal */
export const DASHBOARD_OPTION_KEYS = [
  'queues',
  'basePath',
  'guard',
  'publicReads',
  'challenge',
  'allowedHosts',
  'onWarning',
  'throughput',
  'refreshMs',
] as const satisfies ReadonlyArray<keyof DashboardOptions>;

/** @internal */
export interface ResolvedDashboardOptions {
  queues: Map<string, AnyQueue>;
  basePath: string;
  guard: DashboardGuard | undefined;
  publicReads: boolean;
  challenge: string | undefined;
  /** Lower-case names; one starting with '.' stands for that domain and its subdomains. */
  allowedHosts: string[];
  intervalMs: number;
  points: number;
  refreshMs: number;
  warn: (message: string) => void;
}

// A DNS name (no port, no scheme), optionally with a leading '.' for its subdomains too.
const HOST_NAME = /^\.?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Checks the options before anything subscribes or listens (`mayBeEmpty`: no queue yet). @internal */
export function resolveDashboardOptions(o: DashboardOptions, { mayBeEmpty = false } = {}): ResolvedDashboardOptions {
  assertOptions('dashboard options', o, DASHBOARD_OPTION_KEYS);
  // Empty only for a dashboard that follows an app whose queues come at run time.
  if (!Array.isArray(o.queues) || (o.queues.length === 0 && !mayBeEmpty)) throw new ValidationError('queues', 'must be a non-empty array of Queue objects');
  const queues = new Map<string, AnyQueue>();
  for (const q of o.queues) {
    assertQueueName(q?.name, 'queues[].name');
    if (queues.has(q.name)) throw new ValidationError('queues', `queue '${q.name}' is listed twice`);
    queues.set(q.name, q);
  }
  if (o.guard !== undefined) assertFunction('guard', o.guard);
  const publicReads = o.publicReads ?? false;
  assertBoolean('publicReads', publicReads);
  if (publicReads && o.guard) throw new ValidationError('publicReads', 'give a guard or publicReads, not both: a guard decides reads too');
  if (o.challenge !== undefined) {
    assertString('challenge', o.challenge, 1024);
    if (!o.guard) throw new ValidationError('challenge', 'needs a guard: the challenge asks for the credentials the guard checks');
  }
  const allowedHosts = o.allowedHosts ?? [];
  if (!Array.isArray(allowedHosts)) throw new ValidationError('allowedHosts', `must be an array of host names, got ${describe(allowedHosts)}`);
  allowedHosts.forEach((h: unknown, i) => {
    if (typeof h !== 'string' || h.length > 253 || !HOST_NAME.test(h.toLowerCase())) {
      throw new ValidationError(`allowedHosts[${i}]`, `must be a host name without scheme or port (e.g. "queues.example.com", or ".example.com" for its subdomains too), got ${describe(h)}`);
    }
  });
  if (o.onWarning !== undefined) assertFunction('onWarning', o.onWarning);
  const t = o.throughput ?? {};
  assertOptions('throughput', t, ['intervalMs', 'points']);
  const intervalMs = t.intervalMs ?? DEFAULT_THROUGHPUT_INTERVAL_MS;
  const points = t.points ?? DEFAULT_THROUGHPUT_POINTS;
  assertInt('throughput.intervalMs', intervalMs, { min: 100, max: 86_400_000 });
  assertInt('throughput.points', points, { min: 2, max: 10_000 });
  const refreshMs = o.refreshMs ?? DEFAULT_REFRESH_MS;
  assertInt('refreshMs', refreshMs, { min: 100, max: 3_600_000 });
  return {
    queues,
    basePath: normalizeBasePath(o.basePath ?? '/'),
    guard: o.guard,
    publicReads,
    challenge: o.challenge,
    allowedHosts: allowedHosts.map((h) => h.toLowerCase()),
    intervalMs,
    points,
    refreshMs,
    warn: o.onWarning ?? processWarning,
  };
}

function processWarning(message: string): void {
  process.emitWarning(message, { type: 'RelqWarning', code: 'RELQ_DASHBOARD_ACCESS' });
}

/** '/queues/' and 'queues' become '/queues'; '/' becomes ''. `field` names it in the error. @internal */
export function normalizeBasePath(path: unknown, field = 'basePath'): string {
  if (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path)) {
    throw new ValidationError(field, `must be a URL path of letters, digits and . _ ~ - / (e.g. "/queues"), got ${describe(path)}`);
  }
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
