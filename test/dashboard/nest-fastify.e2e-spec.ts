/**
 * The dashboard of a Nest app on Fastify in headless Chromium against a real Redis: the page
 * RelqDashboardModule serves loads, lists the app's queues, and a click retries a dead letter
 * (the page's action passes the CSRF checks through Fastify; checked through the engine).
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { QueueModule, QueueRegistry } from '../../lib/nest/index.js';
import { RelqDashboardModule } from '../../lib/dashboard/nest/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitForValue } from '../support/wait.js';
import { launchBrowser, type Browser } from './headless-browser.js';

let redis: TestRedis;
let app: INestApplication | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await redis?.stop();
});

test('the page of a Nest app on Fastify shows its queues and retries a dead letter on a click', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [
      QueueModule.forRoot({ connection: redis.url, prefix: uniquePrefix() }),
      QueueModule.registerQueue({ name: 'emails' }, { name: 'reports' }),
      RelqDashboardModule.forRoot({ path: '/admin/queues', guard: () => true, refreshMs: 300 }),
    ],
  }).compile();
  app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: process.env.RELQ_TEST_LOGS ? ['error', 'warn', 'log'] : false });
  await app.listen(0, '127.0.0.1');
  const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues/`;

  const emails = app.get(QueueRegistry).getQueue('emails');
  await emails.add({ to: 'bounce@example.com' }, { jobId: 'invoice-7781', attempts: 1 });
  const [lease] = await emails.lease({ count: 1 });
  await emails.nack(lease!, { error: new Error('550 mailbox unavailable') });
  expect((await emails.getJob('invoice-7781'))?.state).toBe('dead');

  browser = await launchBrowser();
  const page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  expect(await res?.headerValue('content-security-policy')).toContain("script-src 'self'");
  await page.locator('#queue-table tr[data-queue="reports"]').waitFor();
  await page.locator('#queue-table tr[data-queue="emails"]').click();
  await page.locator('#tabs button[data-state="dead"]').click();
  const dead = page.locator('#jobs tr[data-job-id="invoice-7781"]');
  await dead.waitFor();
  await dead.locator('button[data-action="retry"]').click();
  await waitForValue(async () => ((await emails.getJob('invoice-7781'))?.state === 'pending' ? true : undefined), 'the retried job pending', 10_000);
  await dead.waitFor({ state: 'detached' });
  expect(await page.locator('#status').getAttribute('class')).not.toContain('error');
  expect(pageErrors).toEqual([]);
});
