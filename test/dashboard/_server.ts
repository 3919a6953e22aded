/**
 * A node:http server for a dashboard, on a free port of 127.0.0.1; `close()` stops both.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDashboard, type DashboardHandler, type DashboardOptions } from '../../lib/dashboard/index.js';

export interface DashboardServer {
  /** The dashboard's page, e.g. http://127.0.0.1:41234/admin/queues/ */
  readonly url: string;
  readonly handler: DashboardHandler;
  close(): Promise<void>;
}

export async function startDashboard(options: DashboardOptions): Promise<DashboardServer> {
  const handler = createDashboard(options);
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = options.basePath ?? '';
  return {
    url: `http://127.0.0.1:${port}${base.replace(/\/$/, '')}/`,
    handler,
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
