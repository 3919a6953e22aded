/**
 * The dashboard page in headless Chromium against a real Redis: a job added after the page
 * loaded shows up without a reload, job data is shown as text (no markup runs), a click
 * retries a dead letter (checked through the engine), and a screenshot is saved.
 * RELQ_DASHBOARD_SCREENSHOT=<file> also writes the screenshot there (docs/images/dashboard.png).
 */
import { copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { Queue, Worker, type Job } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitForValue, waitUntil } from '../support/wait.js';
import { launchBrowser, type Browser } from './headless-browser.js';
import { startDashboard, type DashboardServer } from './dashboard-server.js';

interface Email {
  to: string;
  subject: string;
}

let redis: TestRedis;
let server: DashboardServer | undefined;
let browser: Browser | undefined;
let worker: Worker<Email, string> | undefined;
const queues: Queue<any, any>[] = [];
/** Addresses the worker's handler bounces; emptied to let a retried job complete. */
const bouncing = new Set(['bounce@example.com', 'old@example.org', 'typo@exmaple.com']);

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await browser?.close();
  await worker?.close().catch(() => undefined);
  await server?.close().catch(() => undefined);
  await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
  await redis?.stop();
});

function queue<D>(name: string, prefix: string): Queue<D, string> {
  const q = new Queue<D, string>(name, { connection: redis.url, prefix });
  queues.push(q);
  return q;
}

test('the page follows the queues live, renders job data as text and retries a dead letter on a click', async () => {
  const prefix = uniquePrefix();
  const emails = queue<Email>('emails', prefix);
  const reports = queue<{ month: string }>('reports', prefix);
  const thumbnails = queue<{ image: string; width: number }>('thumbnails', prefix);
  server = await startDashboard({ queues: [emails, reports, thumbnails], basePath: '/admin/queues', guard: () => true, refreshMs: 300, throughput: { intervalMs: 1000, points: 120 } });

  // Some history: emails run (one address bounces into the dead letters), reports wait,
  // thumbnails have work in every waiting state.
  worker = new Worker(emails, async (job: Job<Email>) => {
    if (bouncing.has(job.data.to)) throw new Error(`550 mailbox unavailable: ${job.data.to}`);
    if (job.data.subject === 'Weekly digest') await new Promise((resolve) => setTimeout(resolve, 100)); // the send itself
    return `sent to ${job.data.to}`;
  }, { concurrency: 4 });
  await emails.add({ to: 'bounce@example.com', subject: 'Your invoice' }, { jobId: 'invoice-7781', attempts: 2, backoff: { type: 'fixed', delayMs: 10 } });
  await emails.add({ to: 'old@example.org', subject: 'Password reset' }, { jobId: 'reset-1204', attempts: 3, backoff: { type: 'fixed', delayMs: 10 } });
  await emails.add({ to: 'typo@exmaple.com', subject: 'Welcome aboard' }, { jobId: 'welcome-9921', attempts: 1 });
  for (let m = 1; m <= 4; m++) await reports.add({ month: `2026-0${m}` }, { jobId: `report-2026-0${m}` });
  await reports.add({ month: '2026-12' }, { jobId: 'report-2026-12', delayMs: 3_600_000 });
  for (let i = 1; i <= 6; i++) await thumbnails.add({ image: `photos/${i}.jpg`, width: 320 }, { delayMs: i * 600_000 });
  await waitForValue(async () => ((await emails.counts()).dead === 3 ? true : undefined), 'the bounces dead-lettered', 10_000);

  browser = await launchBrowser();
  const page: Page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(server.url);
  await page.locator('#queue-table tr[data-queue="emails"].selected').waitFor();

  // Throughput and backlog over a few intervals, added while the page is open.
  let sent = 0;
  for (const burst of [40, 20, 30]) {
    await emails.addBulk(Array.from({ length: burst }, (_, i) => ({ data: { to: `user${sent + i}@example.com`, subject: 'Weekly digest' } })));
    sent += burst;
    await waitUntil(async () => (await emails.counts()).completed === sent, `${sent} digests sent`, 20_000, 50);
    const intervals = async () => ((await (await fetch(`${server!.url}api/queues/emails/throughput`)).json()) as { points: unknown[] }).points.length;
    const now = await intervals();
    await waitUntil(async () => (await intervals()) > now, 'the next interval', 5000, 50);
  }

  // A job added after the page loaded shows up without a reload; its data stays text.
  await page.locator('#queue-table tr[data-queue="reports"]').click();
  await page.locator('#jobs tr[data-job-id="report-2026-01"]').waitFor();
  const markup = '<img src=x onerror="document.body.dataset.xss=1">';
  await reports.add({ month: markup }, { jobId: 'report-<b>bold</b>' });
  const row = page.locator('#jobs tr[data-job-id="report-<b>bold</b>"]');
  await row.waitFor();
  expect(await row.locator('td.data').textContent()).toBe(JSON.stringify({ month: markup }));
  expect(await row.locator('td.id').textContent()).toBe('report-<b>bold</b>');
  // the page's total is the overview's count of the state
  await page.locator('#page-info', { hasText: '1–5 of 5' }).waitFor();
  expect(await page.locator('#jobs img, #jobs b').count()).toBe(0);
  await row.click();
  await page.locator('#detail:not([hidden])').waitFor();
  expect(await page.locator('#detail-title').textContent()).toBe('reports / report-<b>bold</b>');
  expect(await page.locator('#detail img, #detail b').count()).toBe(0);
  expect(await page.locator('body').getAttribute('data-xss')).toBeNull();

  // A click retries the dead letter: the engine has it back, and it completes this time.
  await page.locator('#queue-table tr[data-queue="emails"]').click();
  await page.locator('#tabs button[data-state="dead"]').click();
  const dead = page.locator('#jobs tr[data-job-id="invoice-7781"]');
  await dead.waitFor();
  await page.locator('#detail-close').click();
  await page.locator('#detail').waitFor({ state: 'hidden' });
  const shot = join(browser.dir, 'dashboard.png');
  await page.screenshot({ path: shot });
  expect(statSync(shot).size).toBeGreaterThan(10_000);
  if (process.env.RELQ_DASHBOARD_SCREENSHOT) copyFileSync(shot, process.env.RELQ_DASHBOARD_SCREENSHOT);

  bouncing.clear();
  await dead.locator('button[data-action="retry"]').click();
  await waitForValue(async () => ((await emails.getJob('invoice-7781'))?.state === 'completed' ? true : undefined), 'the retried job completed', 10_000);
  expect((await emails.getJob('invoice-7781'))?.result).toBe('sent to bounce@example.com');
  await page.locator('#jobs tr[data-job-id="invoice-7781"]').waitFor({ state: 'detached' });
  await page.locator('#jobs tr[data-job-id="reset-1204"]').click();
  await page.locator('#detail-title', { hasText: 'reset-1204' }).waitFor();
  // its error history: each of its three attempts failed
  const blocks = await page.locator('#detail-blocks').textContent();
  expect(blocks).toContain('550 mailbox unavailable: old@example.org');
  expect(blocks?.match(/attempt \d/g)).toEqual(['attempt 1', 'attempt 2', 'attempt 3']);
  // the drawer's own actions: remove asks first
  page.once('dialog', (dialog) => void dialog.accept());
  await page.locator('#detail-actions button[data-action="remove"]').click();
  await waitForValue(async () => ((await emails.getJob('reset-1204')) === null ? true : undefined), 'the job removed', 5000);
  await page.locator('#detail').waitFor({ state: 'hidden' });
  expect(pageErrors).toEqual([]);
  expect(existsSync(shot)).toBe(true);
});
