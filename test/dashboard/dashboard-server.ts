/**
 * A node:http server for a dashboard, on a free port of 127.0.0.1; `close()` stops both.
 * What the dashboard says at start-up is collected, not printed.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDashboard, type DashboardHandler, type DashboardOptions } from '../../lib/dashboard/index.js';

export interface DashboardServer {
  /** The dashboard's page, e.g. http://127.0.0.1:41234/admin/queues/ */
  readonly url: string;
  readonly handler: DashboardHandler;
  /** What the dashboard said at start-up (its onWarning), unless the options take it elsewhere. */
  readonly warnings: string[];
  close(): Promise<void>;
}

export async function startDashboard(options: DashboardOptions): Promise<DashboardServer> {
  const warnings: string[] = [];
  const handler = createDashboard({ onWarning: (message) => warnings.push(message), ...options });
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = options.basePath ?? '';
  return {
    url: `http://127.0.0.1:${port}${base.replace(/\/$/, '')}/`,
    handler,
    warnings,
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** POSTs an action the way the page does (JSON body, the action header). */
export function act(url: string, body: unknown = {}, headers: Record<string, string> = { 'x-relq-dashboard': '1' }): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** A plain HTTP request with the headers given as they are (Host included), over TCP or a Unix socket. */
export function raw(
  url: string,
  { method = 'GET', headers = {}, body, socketPath }: { method?: string; headers?: Record<string, string>; body?: string; socketPath?: string } = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ ...(socketPath ? { socketPath } : { host: u.hostname, port: u.port }), path: u.pathname + u.search, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
