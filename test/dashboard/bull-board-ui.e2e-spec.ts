/**
 * relq queues in bull-board's own UI (@bull-board/ui, served by @bull-board/express as the docs
 * show it) in headless Chromium against a real Redis: the queue is listed with its counts, a
 * job's page shows its data, a dead letter is retried from its page (checked through the
 * engine), and the queue's metrics card draws the history the queue keeps in Redis; no request of the page fails and no error is
 * shown.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import type { Page } from 'playwright-core';
import { Queue } from '../../lib/index.js';
import { RelqBullBoardAdapter } from '../../lib/dashboard/bull-board/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitForValue } from '../support/wait.js';
import { launchBrowser, type Browser } from './headless-browser.js';

/** What this test uses of Express (imported by name: the project has no Express typings). */
interface ExpressApp {
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, done: () => void): Server;
}

let redis: TestRedis;
let billing: Queue<{ customer: string; amount: number }, string> | undefined;
let server: Server | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await billing?.close();
  await redis?.stop();
});

/** bull-board at `/bull-board` of an Express app on a free port of 127.0.0.1: its URL. */
async function serveBoard(queue: Queue<any, any>): Promise<string> {
  const express = ((await import('express' as string)) as { default: () => ExpressApp }).default;
  const serverAdapter = new ExpressAdapter().setBasePath('/bull-board');
  // showMetrics: the queue page's metrics card, which bull-board shows only when asked
  createBullBoard({ queues: [new RelqBullBoardAdapter(queue)], serverAdapter, options: { uiConfig: { showMetrics: true } } });
  const app = express();
  app.use('/bull-board', serverAdapter.getRouter());
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/bull-board`;
}

/** Waits until the text of the page's main area (spaces collapsed) matches `pattern`; throws with the last text seen. */
async function mainMatches(page: Page, pattern: RegExp): Promise<string> {
  let text = '';
  try {
    return await waitForValue(async () => {
      text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
      return pattern.test(text) ? text : undefined;
    }, `the page to show ${pattern}`, 10_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; it shows: ${text}`);
  }
}

test("bull-board's UI lists a relq queue with its counts, shows a job's data, retries a dead letter and opens the metrics", async () => {
  // metrics: the queue keeps its per-minute history in Redis, which bull-board's metrics card draws
  billing = new Queue<{ customer: string; amount: number }, string>('billing', { connection: redis.url, prefix: uniquePrefix(), metrics: true });
  await billing.add({ customer: 'ada', amount: 42 }, { jobId: 'invoice-1', attempts: 1 });
  const [declined] = await billing.lease({ count: 1 });
  await billing.nack(declined!, { error: new Error('card declined') });
  await billing.add({ customer: 'bob', amount: 7 }, { jobId: 'receipt-1' });
  const [paid] = await billing.lease({ count: 1 });
  await billing.ack(paid!, 'paid');
  await billing.add({ customer: 'eve', amount: 3 }, { jobId: 'invoice-2' });
  const base = await serveBoard(billing);

  browser = await launchBrowser();
  const page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  const failedCalls: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('response', (res) => {
    if (res.url().startsWith(`${base}/api/`) && res.status() >= 400) failedCalls.push(`${res.status()} ${res.url()}`);
  });

  // the overview: the queue, its jobs and the failed one among them
  await page.goto(`${base}/`);
  const card = page.locator('main li', { has: page.locator('a[title="billing"]') });
  await card.getByRole('button', { name: '3 Jobs' }).waitFor();
  expect(await card.innerText()).toMatch(/failed\s*1/i);

  // the queue's page: a count per status, as relq's states map to them
  await card.locator('a[title="billing"]').click();
  await page.waitForURL(/\/queue\/billing$/);
  await mainMatches(page, /WAITING 1 ACTIVE DELAYED COMPLETED 1 FAILED 1 WAITING CHILDREN/);

  // the metrics card: drawn from the queue's history, not "No metrics collected yet"
  expect(await mainMatches(page, /Throughput \(jobs \/ min\)/)).not.toMatch(/No metrics collected yet/);
  await page.locator('main svg.recharts-surface').first().waitFor(); // its chart

  // the failed job's own page, its data
  await page.locator('main a[href$="/queue/billing?status=failed"]').click();
  await page.locator('main a', { hasText: 'invoice-1' }).click();
  await page.waitForURL(/\/queue\/billing\/invoice-1/);
  await mainMatches(page, /invoice-1.*Error: card declined/);
  await page.getByRole('tab', { name: 'Data' }).click();
  await mainMatches(page, /jobData: ?\{ customer: ?"ada", amount: ?42 \}/);

  // retried from its page, after bull-board asks
  await page.locator('button:has(svg.lucide-refresh-cw)').first().click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await waitForValue(async () => ((await billing!.getJob('invoice-1'))?.state === 'pending' ? true : undefined), 'the retried job pending', 10_000);
  expect((await billing.counts()).dead).toBe(0);

  expect(await page.getByText('Internal server error').count()).toBe(0);
  expect(failedCalls).toEqual([]);
  expect(pageErrors).toEqual([]);
});
