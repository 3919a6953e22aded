/**
 * The docs' Basic auth guard (examples/dashboard-basic-auth.ts, through examples/dashboard.ts)
 * in headless Chromium against a real Redis: the browser answers the dashboard's challenge with
 * its credentials, as an operator does at the sign-in prompt, and then reads and acts; wrong
 * ones are asked for again.
 */
import { jest } from '@jest/globals';
import { main, type RunningDashboard } from '../../examples/dashboard.js';
import { Queue } from '../../lib/index.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitForValue } from '../support/wait.js';
import { launchBrowser, type Browser } from './headless-browser.js';

let redis: TestRedis;
let running: RunningDashboard | undefined;
let reports: Queue | undefined;
const browsers: Browser[] = [];
const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const b of browsers) await b.close();
  await running?.stop();
  await reports?.close();
  log.mockRestore();
  await redis?.stop();
});

async function browserAs(username: string, password: string): Promise<Browser> {
  const b = await launchBrowser({ httpCredentials: { username, password } });
  browsers.push(b);
  return b;
}

test('an operator signs in with the Basic auth credentials and acts; wrong credentials are asked for again', async () => {
  running = await main(redis.url, 0);
  reports = new Queue('reports', { connection: redis.url });

  const stranger = await (await browserAs('ops', 'guess')).context.newPage();
  const refused = await stranger.goto(running.url);
  expect(refused?.status()).toBe(401);
  expect(await refused?.headerValue('www-authenticate')).toBe('Basic realm="relq dashboard", charset="UTF-8"');

  const page = await (await browserAs('ops', 'change-me')).context.newPage();
  page.setDefaultTimeout(10_000);
  const signedIn = await page.goto(running.url);
  expect(signedIn?.status()).toBe(200);
  await page.locator('#queue-table tr[data-queue="reports"]').click();
  await page.locator('#queue-name', { hasText: 'reports' }).waitFor();
  await page.locator('#pause').click();
  await waitForValue(async () => ((await reports!.counts()).paused ? true : undefined), 'the queue paused from the page', 5000);
  await page.locator('#status', { hasText: 'pause: reports' }).waitFor();
  expect(await page.locator('#status').getAttribute('class')).not.toContain('error');
});
