// The dashboard on a plain node:http server (docs/dashboard.md), kept running by test/examples.
// `npm run example -- dashboard`, then open http://127.0.0.1:<PORT>/queues/ (PORT: default 3001)
// and sign in as ops with DASHBOARD_PASSWORD (default 'change-me').
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, Worker, type Job } from 'relq';
import { createDashboard } from 'relq/dashboard';
import { basicAuth } from './dashboard-basic-auth.js';

interface Email {
  to: string;
}

export interface RunningDashboard {
  url: string;
  stop(): Promise<void>;
}

export async function main(
  redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  port = Number(process.env.PORT ?? 3001),
): Promise<RunningDashboard> {
  const emails = new Queue<Email, string>('emails', { connection: redisUrl });
  const reports = new Queue<{ month: string }>('reports', { connection: redisUrl });

  // Some work to look at: a worker that sends most emails and bounces one address.
  const worker = new Worker(emails, async (job: Job<Email>) => {
    if (job.data.to.endsWith('@bounce.example')) throw new Error(`550 mailbox unavailable: ${job.data.to}`);
    return `sent to ${job.data.to}`;
  });
  await emails.addBulk([{ data: { to: 'ada@example.com' } }, { data: { to: 'nobody@bounce.example' }, opts: { attempts: 2 } }]);
  await reports.add({ month: '2026-12' }, { delayMs: 3_600_000 });

  const dashboard = createDashboard({
    queues: [emails, reports],
    basePath: '/queues',
    // The browser asks for user 'ops' and this password, then reads and acts with them.
    ...basicAuth('ops', process.env.DASHBOARD_PASSWORD ?? 'change-me'),
  });
  const server = createServer((req, res) => dashboard(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/queues/`;
  console.log(`relq dashboard on ${url}`);

  return {
    url,
    async stop() {
      dashboard.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.close();
      await Promise.all([emails.close(), reports.close()]);
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const running = await main();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void running.stop());
}
