/**
 * DNS rebinding in headless Chromium against a real Redis: a host resolver rule maps a name of
 * another site to 127.0.0.1, as a rebound DNS answer would. A page of that site is then
 * same-origin with the dashboard in the browser; the dashboard refuses it by its Host, reads
 * included, while a name in allowedHosts and localhost work.
 */
import type { Page } from 'playwright-core';
import { Queue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { launchBrowser, type Browser } from './headless-browser.js';
import { startDashboard, type DashboardServer } from './dashboard-server.js';

let redis: TestRedis;
let browser: Browser | undefined;
let server: DashboardServer | undefined;
let payments: Queue<{ card: string }> | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await payments?.close();
  await redis?.stop();
});

/** What a script of the page at hand gets from the dashboard's API: status and body. */
function fromPage(page: Page, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return page.evaluate(
    async ({ path, init }) => {
      const res = await fetch(path, init);
      return { status: res.status, body: await res.text() };
    },
    { path, init },
  );
}

test('a page of another site rebound to 127.0.0.1 cannot read jobs or act; allowed names and localhost can', async () => {
  payments = new Queue<{ card: string }>('payments', { connection: redis.url, prefix: uniquePrefix() });
  await payments.add({ card: '4111-1111-secret' }, { jobId: 'payment-1' });
  // a guard that lets everyone in: the Host check does not depend on it
  server = await startDashboard({ queues: [payments], basePath: '/queues', guard: () => true, allowedHosts: ['queues.example'], refreshMs: 300 });
  const port = new URL(server.url).port;
  browser = await launchBrowser({ args: ['--host-resolver-rules=MAP attacker.example 127.0.0.1, MAP queues.example 127.0.0.1'] });
  const page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);

  const attacker = `http://attacker.example:${port}`;
  const landing = await page.goto(`${attacker}/queues/`);
  expect(landing?.status()).toBe(403);
  expect(JSON.parse((await page.locator('body').textContent())!).error).toMatch(/^host "attacker\.example:\d+" is not allowed/);
  // its own scripts, same-origin in the browser's eyes, get nothing either
  expect(page.url().startsWith(attacker)).toBe(true);
  for (const path of ['/queues/api/queues', '/queues/api/queues/payments/jobs?state=pending', '/queues/api/queues/payments/jobs/payment-1']) {
    const r = await fromPage(page, path);
    expect({ path, status: r.status }).toEqual({ path, status: 403 });
    expect(r.body).not.toContain('4111');
  }
  const pause = await fromPage(page, '/queues/api/queues/payments/pause', { method: 'POST', headers: { 'content-type': 'application/json', 'x-relq-dashboard': '1' }, body: '{}' });
  expect(pause.status).toBe(403);
  expect((await payments.counts()).paused).toBe(false);

  // the same browser, through a name the dashboard answers to
  for (const origin of [`http://queues.example:${port}`, `http://localhost:${port}`]) {
    const ok = await page.goto(`${origin}/queues/`);
    expect(ok?.status()).toBe(200);
    await page.locator('#jobs tr[data-job-id="payment-1"]').waitFor();
    expect((await fromPage(page, '/queues/api/queues/payments/jobs/payment-1')).body).toContain('4111-1111-secret');
  }
});
