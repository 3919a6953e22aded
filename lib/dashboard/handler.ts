import type { AnyQueue } from '../core/queue/any-queue.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JobLeasedError, ValidationError } from '../core/errors.js';
import { JobNotRetryableError } from '../core/management/errors.js';
import { accessNotice, authorize, checkHost } from './access.js';
import { actions, JOB_ACTIONS, reads, type Watched } from './api.js';
import { asset } from './assets.js';
import { HttpError, publicMessage, readAction, send, sendJson } from './http.js';
import { resolveDashboardOptions, type DashboardOptions, type ResolvedDashboardOptions } from './options.js';
import { ThroughputRecorder } from './throughput.js';

/** A request handler for node:http, Express or any framework that hands over `req` and `res`. */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** Stops listening to the queues' events and sampling their counts (the queues stay open). */
  close(): void;
}

/**
 * The dashboard: one HTML page and a JSON API under `<basePath>/api/`. Requests outside
 * `basePath` go to `next` (404 without one). From creation until `close()` it listens to
 * each queue's events for the throughput chart.
 */
export function createDashboard(options: DashboardOptions): DashboardHandler {
  return openDashboard(resolveDashboardOptions(options)).handler;
}

/** A dashboard whose list of queues changes while it runs (the Nest module's follows the app's). @internal */
export interface LiveDashboard {
  handler: DashboardHandler;
  /** Shows `queue` (last on the overview) from now on. */
  watch(queue: AnyQueue): void;
  /** Stops showing the queue named `name`, and listening to its events. */
  unwatch(name: string): void;
}

/** The dashboard of options already checked. @internal */
export function openDashboard(o: ResolvedDashboardOptions): LiveDashboard {
  const notice = accessNotice(o);
  if (notice) o.warn(notice);
  const watched = new Map<string, Watched>();
  const watch = (queue: AnyQueue): void => {
    if (!watched.has(queue.name)) watched.set(queue.name, { queue, recorder: new ThroughputRecorder(queue, o.intervalMs, o.points) });
  };
  for (const queue of o.queues.values()) watch(queue);
  const handler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void => {
    void serve(o, watched, req, res, next).catch((err: unknown) => answerError(res, err));
  };
  return {
    handler: Object.assign(handler, { close: () => watched.forEach((w) => w.recorder.stop()) }),
    watch,
    unwatch(name) {
      watched.get(name)?.recorder.stop();
      watched.delete(name);
    },
  };
}

async function serve(
  o: ResolvedDashboardOptions,
  watched: Map<string, Watched>,
  req: IncomingMessage & { originalUrl?: string },
  res: ServerResponse,
  next: ((err?: unknown) => void) | undefined,
): Promise<void> {
  // Express strips a mount path from req.url; originalUrl keeps the whole path.
  const url = new URL(req.originalUrl ?? req.url ?? '/', 'http://dashboard');
  const path = url.pathname;
  if (path !== o.basePath && !path.startsWith(`${o.basePath}/`)) {
    if (next) return next();
    throw new HttpError(404, 'not found');
  }
  checkHost(o, req);
  if (path === o.basePath) {
    // relative links of the page need the trailing slash
    res.writeHead(308, { location: `${o.basePath}/${url.search}` });
    res.end();
    return;
  }
  const rest = path.slice(o.basePath.length);
  if (!rest.startsWith('/api/')) {
    const file = asset(rest);
    if (!file) throw new HttpError(404, 'not found');
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method not allowed');
    await authorize(o, req, { kind: 'read' });
    return send(res, 200, file.type, file.body);
  }
  const parts = rest.slice('/api/'.length).split('/').map(decodeURIComponent);
  if (parts[0] === 'queues' && parts.length === 1) {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read' });
    return sendJson(res, 200, { refreshMs: o.refreshMs, queues: await reads.overview(watched.values()) });
  }
  if (parts[0] !== 'queues' || parts.length < 3) throw new HttpError(404, 'no such API route');
  const w = watched.get(parts[1]!);
  if (!w) throw new HttpError(404, `no queue '${parts[1]}' on this dashboard`);
  const queue = w.queue.name;
  const [, , what, id, action] = parts;
  if (parts.length === 3 && what === 'throughput') {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read', queue });
    return sendJson(res, 200, await reads.throughput(w));
  }
  if (parts.length === 3 && what === 'settings') {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read', queue });
    return sendJson(res, 200, await reads.settings(w));
  }
  if (parts.length === 3 && what === 'workers') {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read', queue });
    return sendJson(res, 200, await reads.workers(w));
  }
  if (parts.length === 3 && what === 'jobs') {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read', queue });
    return sendJson(res, 200, await reads.jobs(w, url.searchParams));
  }
  if (parts.length === 4 && what === 'jobs') {
    onlyMethod(req, 'GET');
    await authorize(o, req, { kind: 'read', queue });
    const job = await w.queue.getJob(id!);
    if (!job) throw new HttpError(404, `no job '${id}' in queue '${queue}'`);
    return sendJson(res, 200, job);
  }
  const name = parts.length === 5 && what === 'jobs' ? action! : parts.length === 3 ? what! : '';
  const run = Object.hasOwn(actions, name) && JOB_ACTIONS.has(name) === (parts.length === 5) ? actions[name] : undefined;
  if (!run) throw new HttpError(404, 'no such API route');
  onlyMethod(req, 'POST');
  await authorize(o, req, { kind: 'action', queue, action: name });
  const body = await readAction(req);
  return sendJson(res, 200, await run(w.queue, body, id));
}

function onlyMethod(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method) throw new HttpError(405, `${method} only`);
}

function answerError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof URIError) err = new HttpError(400, 'malformed percent-encoding in the URL');
  const status = err instanceof HttpError ? err.status : err instanceof ValidationError ? 400 : err instanceof JobLeasedError || err instanceof JobNotRetryableError ? 409 : 500;
  sendJson(res, status, { error: publicMessage(err) }, err instanceof HttpError ? err.headers : {});
}
