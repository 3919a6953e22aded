import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { HttpError } from './http.js';
import type { DashboardAccess, ResolvedDashboardOptions } from './options.js';

/**
 * Who may use the dashboard: the Host a request names, then the guard, or without one,
 * reads from this machine only. @internal
 */
export async function authorize(o: ResolvedDashboardOptions, req: IncomingMessage, access: DashboardAccess): Promise<void> {
  if (o.guard) {
    if ((await o.guard(req, access)) === true) return;
    if (o.challenge && access.kind === 'read') throw new HttpError(401, 'sign in to use the dashboard', { 'www-authenticate': o.challenge });
    throw new HttpError(403, 'not allowed');
  }
  if (access.kind === 'action') throw new HttpError(403, 'actions need a guard: createDashboard({ guard }) decides who may act');
  if (!o.publicReads && !isLocal(req)) {
    throw new HttpError(403, 'without a guard the dashboard answers only to this machine (loopback, not through a proxy): give it a guard, or publicReads: true');
  }
}

/**
 * Refuses a request whose Host is not one the dashboard answers to. A page of another site
 * whose DNS name was rebound to this server's address is same-origin with it in the browser;
 * its requests still name that site in Host. IP addresses cannot be rebound, and browsers
 * resolve localhost and its subdomains themselves, so those are always allowed. @internal
 */
export function checkHost(o: ResolvedDashboardOptions, req: IncomingMessage): void {
  const host = hostName(req);
  if (host !== undefined && (isIP(host) !== 0 || isLocalhost(host) || o.allowedHosts.some((h) => host === h || (h.startsWith('.') && (host.endsWith(h) || host === h.slice(1)))))) {
    return;
  }
  throw new HttpError(403, `host ${JSON.stringify(req.headers.host ?? '')} is not allowed: the dashboard answers to localhost, IP addresses and the names in allowedHosts`);
}

/** Who may use a dashboard without a guard, said once at start-up (none with a guard). @internal */
export function accessNotice(o: ResolvedDashboardOptions): string | undefined {
  if (o.guard) return undefined;
  const at = `relq dashboard at '${o.basePath || '/'}'`;
  return o.publicReads
    ? `${at}: publicReads is on, so anyone who reaches it reads every job's data and results; actions are refused without a guard`
    : `${at}: no guard, so it answers reads only to requests from this machine (a loopback address and host name, not through a proxy) and refuses every action; give it a guard to let others in`;
}

/** Headers a proxy adds: a request carrying one came from somewhere else. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'];

/** From a loopback address, to a loopback host name, not through a proxy that said so. */
function isLocal(req: IncomingMessage): boolean {
  const host = hostName(req);
  return (
    isLoopbackAddress(req.socket.remoteAddress) &&
    host !== undefined &&
    (isLocalhost(host) || isLoopbackAddress(host)) &&
    !FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)
  );
}

/** The Host header's name, lower case, without port, brackets or a final dot. */
function hostName(req: IncomingMessage): string | undefined {
  const host = req.headers.host?.toLowerCase();
  if (!host) return undefined;
  const m = /^\[([0-9a-f:.]+)\](?::\d+)?$/.exec(host) ?? /^([^:]+?)\.?(?::\d+)?$/.exec(host);
  return m?.[1];
}

function isLocalhost(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false; // a Unix socket: a proxy on this machine, as likely as not
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}
