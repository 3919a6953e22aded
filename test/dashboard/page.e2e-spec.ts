/**
 * What the dashboard page tells an operator, in headless Chromium against a real Redis: a
 * refused action says so and the message stays, the status line is not hidden by the job
 * drawer, chart labels do not overlap, a redriven job's fresh attempts are told apart from its
 * old failures, the first paint says it is loading, ids close to URL dot segments work, a
 * queue with a metrics history gets its run-time chart, the queue's live workers are
 * listed, gone once they closed, and a partitioned queue is one row with its breakdown.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { PartitionedQueue, Queue, Worker } from '../../lib/index.js';
import type { DashboardGuard } from '../../lib/dashboard/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitForValue, waitUntil } from '../support/wait.js';
import { launchBrowser, type Browser } from './headless-browser.js';
import { startDashboard, type DashboardServer } from './dashboard-server.js';

let redis: TestRedis;
let browser: Browser;
let server: DashboardServer | undefined;
let page: Page | undefined;
const queues: Queue<any, any>[] = [];

beforeAll(async () => {
  redis = await startRedis();
  browser = await launchBrowser();
});
afterEach(async () => {
  await page?.close().catch(() => undefined);
  page = undefined;
  await server?.close();
  server = undefined;
  while (queues.length) await queues.pop()!.close();
});
afterAll(async () => {
  await browser?.close();
  await redis?.stop();
});

function queue<D = unknown>(name: string, prefix = uniquePrefix()): Queue<D> {
  const q = new Queue<D>(name, { connection: redis.url, prefix });
  queues.push(q);
  return q;
}

/** Every read, and every action but those named. */
const refusing = (...refused: string[]): DashboardGuard => (_req, access) => access.kind === 'read' || !refused.includes(access.action!);

async function open(dashboard: Parameters<typeof startDashboard>[0]): Promise<Page> {
  server = await startDashboard({ refreshMs: 200, ...dashboard });
  page = await browser.context.newPage();
  page.setDefaultTimeout(10_000); // a failed wait names its locator before the test's own timeout
  return page;
}

/** Resolves once the page has read the overview `n` more times (each refresh reads it once). */
function refreshes(p: Page, n: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const onResponse = (res: { url(): string }) => {
      if (new URL(res.url()).pathname.endsWith('/api/queues') && ++seen === n) {
        p.off('response', onResponse);
        resolve();
      }
    };
    p.on('response', onResponse);
  });
}

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** A screenshot to look at: kept in RELQ_DASHBOARD_SHOTS=<dir> when set (else removed with the browser). */
async function shot(p: Page, name: string): Promise<void> {
  const path = join(browser.dir, name);
  await p.screenshot({ path });
  if (process.env.RELQ_DASHBOARD_SHOTS) copyFileSync(path, join(process.env.RELQ_DASHBOARD_SHOTS, name));
}

async function box(l: Locator): Promise<Box> {
  const b = await l.boundingBox();
  if (!b) throw new Error('element not rendered');
  return b;
}

test('a refused action shows its message, and the refreshes after it leave it on screen', async () => {
  const emails = queue('emails');
  const p = await open({ queues: [emails], guard: refusing('pause') });
  await p.goto(server!.url);
  await p.locator('#queue-table tr[data-queue="emails"].selected').waitFor();
  await p.locator('#pause').click();
  await p.locator('#status.error', { hasText: 'not allowed' }).waitFor();
  await refreshes(p, 3);
  expect(await p.locator('#status').textContent()).toBe('not allowed');
  expect(await p.locator('#status').getAttribute('class')).toContain('error');
  expect((await emails.counts()).paused).toBe(false);
});

test('the status line stays in sight while a job is open in the drawer', async () => {
  const reports = queue('reports');
  await reports.add({ month: '2026-12' }, { jobId: 'report-2026-12', delayMs: 3_600_000 });
  const p = await open({ queues: [reports], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#tabs button[data-state="delayed"]').click();
  await p.locator('#jobs tr[data-job-id="report-2026-12"]').click();
  await p.locator('#detail-title', { hasText: 'report-2026-12' }).waitFor();
  await p.locator('#detail-actions button[data-action="promote"]').click();
  await p.locator('#status', { hasText: 'Promote: report-2026-12' }).waitFor();
  expect((await reports.getJob('report-2026-12'))?.state).toBe('pending');
  const drawer = await box(p.locator('#detail'));
  const status = await box(p.locator('#status'));
  expect(drawer.width).toBeGreaterThan(200);
  expect(overlap(status, drawer)).toBe(false);
  // nothing else covers it either: the topmost element at its middle is the status line
  const onTop = await p.locator('#status').evaluate((el, at) => el.contains(el.ownerDocument.elementFromPoint(at.x, at.y)), { x: status.x + status.width / 2, y: status.y + status.height / 2 });
  expect(onTop).toBe(true);
  await shot(p, 'drawer-status.png');
});

test('with one sample so far, the charts label their axes without overlapping', async () => {
  const emails = queue('emails');
  await emails.add({ to: 'ada@example.com' });
  const p = await open({ queues: [emails], throughput: { intervalMs: 60_000, points: 60 } });
  const tp = (await (await fetch(`${server!.url}api/queues/emails/throughput`)).json()) as { samples: unknown[] };
  expect(tp.samples).toHaveLength(1);
  await p.goto(server!.url);
  const labels = p.locator('#backlog-chart text');
  await waitUntil(async () => (await labels.count()) > 3, 'the backlog chart drawn', 5000, 50);
  for (const chart of ['#backlog-chart', '#throughput-chart']) {
    const labels = await p.locator(`${chart} text`).evaluateAll((texts) =>
      texts.map((t) => {
        const { x, y, width, height } = t.getBoundingClientRect();
        return { text: t.textContent!, box: { x, y, width, height } };
      }),
    );
    expect(labels.filter((l) => /^\d\d:\d\d:\d\d$/.test(l.text)).length).toBeGreaterThanOrEqual(1);
    for (const [i, a] of labels.entries()) {
      for (const b of labels.slice(i + 1)) expect({ chart, a: a.text, b: b.text, overlap: overlap(a.box, b.box) }).toEqual({ chart, a: a.text, b: b.text, overlap: false });
    }
  }
  // the one sample is drawn, not only its labels
  expect(await p.locator('#backlog-chart circle').count()).toBeGreaterThan(0);
  await shot(p, 'one-sample.png');
});

test('a queue that keeps a metrics history shows its run-time chart and says the charts come from Redis; another does not', async () => {
  const kept = new Queue<number>('reports', { connection: redis.url, prefix: uniquePrefix(), metrics: true });
  queues.push(kept);
  await kept.add(1);
  await kept.ack((await kept.lease())[0]!);
  const plain = queue('emails');
  const p = await open({ queues: [kept, plain] });
  await p.goto(server!.url);
  await waitUntil(async () => (await p.locator('#runtime-chart circle, #runtime-chart polyline').count()) > 0, 'the run-time chart drawn', 5000, 50);
  expect(await p.locator('#runtime-figure').isVisible()).toBe(true);
  expect(await p.locator('#since').textContent()).toContain("metrics history in Redis");
  await p.locator('.qname', { hasText: 'emails' }).click();
  await waitUntil(async () => !(await p.locator('#runtime-figure').isVisible()), 'the run-time chart hidden', 5000, 50);
  expect(await p.locator('#since').textContent()).toContain('since it started');
});

test("a redriven job's drawer shows its fresh attempts apart from the failures before the redrive", async () => {
  const emails = queue<{ to: string }>('emails');
  await emails.add({ to: 'bounce@example.com' }, { jobId: 'invoice-7781', attempts: 3, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  for (let i = 1; i <= 3; i++) await emails.nack((await emails.lease())[0]!, { error: `550 mailbox unavailable (${i})` });
  expect((await emails.getJob('invoice-7781'))?.state).toBe('dead');
  const p = await open({ queues: [emails], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#tabs button[data-state="dead"]').click();
  await p.locator('#jobs tr[data-job-id="invoice-7781"]').waitFor();
  expect(await p.locator('#jobs tr[data-job-id="invoice-7781"] td.tries').textContent()).toBe('3/3');
  p.once('dialog', (dialog) => void dialog.accept());
  await p.locator('#redrive').click();
  await waitForValue(async () => ((await emails.getJob('invoice-7781'))?.state === 'pending' ? true : undefined), 'the dead letter redriven', 5000);
  const [lease] = await emails.lease(); // its first attempt since the redrive runs
  expect(lease?.job).toMatchObject({ id: 'invoice-7781', attempt: 1 });

  await p.locator('#tabs button[data-state="working"]').click();
  const row = p.locator('#jobs tr[data-job-id="invoice-7781"]');
  await row.waitFor();
  expect(await row.locator('td.tries').textContent()).toBe('0/3 +3');
  await row.click();
  await p.locator('#detail-title', { hasText: 'invoice-7781' }).waitFor();
  const terms = await p.locator('#detail-fields dt').allTextContents();
  const values = await p.locator('#detail-fields dd').allTextContents();
  const fields = Object.fromEntries(terms.map((t, i) => [t, values[i]]));
  expect(fields).toMatchObject({ Attempts: 'attempt 1 of 3 running (3 failed before the last retry)', Retried: '1 time' });
  await shot(p, 'redriven.png');
});

test("a job's drawer shows the deduplication id its add carried", async () => {
  const renders = queue<{ doc: string }>('renders');
  const { id } = await renders.add({ doc: 'd-7' }, { delayMs: 60_000, deduplication: { id: 'render:d-7', mode: 'debounce' } });
  const p = await open({ queues: [renders], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#tabs button[data-state="delayed"]').click();
  const row = p.locator(`#jobs tr[data-job-id="${id}"]`);
  await row.waitFor();
  await row.click();
  await p.locator('#detail-title', { hasText: id }).waitFor();
  const terms = await p.locator('#detail-fields dt').allTextContents();
  const values = await p.locator('#detail-fields dd').allTextContents();
  expect(Object.fromEntries(terms.map((t, i) => [t, values[i]]))).toMatchObject({ 'Deduplication id': 'render:d-7' });
});

test("the queue's live workers are listed with their host, pid and app; a closed one leaves the table", async () => {
  const mail = queue<string>('mail');
  const w = new Worker(queue<string>('mail', mail.prefix), async () => undefined, { concurrency: 3, appName: 'mailer' });
  try {
    const p = await open({ queues: [mail] });
    await p.goto(server!.url);
    const row = p.locator('#workers tbody tr[data-worker-id]');
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(0, 5)).toEqual([expect.any(String), String(process.pid), 'mailer', '3', '0']);
    await w.close();
    await p.locator('#workers td.empty', { hasText: 'No live worker' }).waitFor();
  } finally {
    await w.close();
  }
});

test("a flow child's drawer names its parent", async () => {
  const orders = queue<string>('{dash}-orders');
  const mails = queue<string>('{dash}-mails', orders.prefix);
  await orders.addFlow({ data: 'ship', opts: { jobId: 'ship' }, children: [{ data: 'mail', queue: mails.name, opts: { jobId: 'mail' } }] });
  const p = await open({ queues: [orders, mails], guard: () => true });
  await p.goto(server!.url);
  await p.locator(`#queue-table tr[data-queue="${mails.name}"]`).click();
  const row = p.locator('#jobs tr[data-job-id="mail"]');
  await row.waitFor();
  await row.click();
  await p.locator('#detail-title', { hasText: 'mail' }).waitFor();
  const terms = await p.locator('#detail-fields dt').allTextContents();
  const values = await p.locator('#detail-fields dd').allTextContents();
  expect(Object.fromEntries(terms.map((t, i) => [t, values[i]]))).toMatchObject({ Parent: `${orders.name} / ship` });
});

test("a completed job's drawer retries it after asking; its attempts then count from the retry", async () => {
  const reports = queue<{ month: string }>('reports');
  await reports.add({ month: '2026-11' }, { jobId: 'report-2026-11', attempts: 3, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  await reports.nack((await reports.lease())[0]!, { error: 'upstream timeout' });
  expect(await reports.ack((await reports.lease())[0]!, 'ok')).toBe(true);
  const p = await open({ queues: [reports], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#tabs button[data-state="completed"]').click();
  await p.locator('#jobs tr[data-job-id="report-2026-11"]').click();
  await p.locator('#detail-title', { hasText: 'report-2026-11' }).waitFor();
  const fields = async () => {
    const terms = await p.locator('#detail-fields dt').allTextContents();
    const values = await p.locator('#detail-fields dd').allTextContents();
    return Object.fromEntries(terms.map((t, i) => [t, values[i]]));
  };
  expect(await fields()).toMatchObject({ Attempts: 'completed at attempt 2 of 3' });
  p.once('dialog', (dialog) => void dialog.accept());
  await p.locator('#detail-actions button[data-action="retry"]').click();
  await p.locator('#status', { hasText: 'Retry: report-2026-11' }).waitFor();
  expect(await reports.getJob('report-2026-11')).toMatchObject({ state: 'pending', retries: 1, failuresBeforeRedrive: 1 });
  await p.locator('#detail-fields dd', { hasText: 'attempt 1 of 3 next (1 failed before the last retry)' }).waitFor();
  expect(await fields()).toMatchObject({ Attempts: 'attempt 1 of 3 next (1 failed before the last retry)', Retried: '1 time' });
});

test("a running job's drawer cancels it after asking: dismissed, nothing happens; accepted, it is dead-lettered", async () => {
  const exports = queue<{ report: string }>('exports');
  await exports.add({ report: 'q3' }, { jobId: 'export-q3' });
  const [lease] = await exports.lease();
  const p = await open({ queues: [exports], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#tabs button[data-state="working"]').click();
  await p.locator('#jobs tr[data-job-id="export-q3"]').click();
  await p.locator('#detail-title', { hasText: 'export-q3' }).waitFor();
  const asked: string[] = [];
  p.once('dialog', (dialog) => void (asked.push(dialog.message()), dialog.dismiss()));
  await p.locator('#detail-actions button[data-action="cancel"]').click();
  await waitUntil(() => asked.length === 1, 'the question');
  expect(asked[0]).toBe('Cancel the running job export-q3? Its handler is aborted and the job is dead-lettered.');
  expect((await exports.getJob('export-q3'))?.state).toBe('working');
  p.once('dialog', (dialog) => void dialog.accept());
  await p.locator('#detail-actions button[data-action="cancel"]').click();
  await p.locator('#status', { hasText: 'Cancel: export-q3 dead' }).waitFor();
  expect(await exports.getJob('export-q3')).toMatchObject({ state: 'dead', lastError: 'CancelledError: job export-q3 was cancelled' });
  expect(await exports.ack(lease!)).toBe(false);
  // a dead job offers no Cancel
  await p.locator('#detail-fields dd', { hasText: 'dead' }).first().waitFor();
  expect(await p.locator('#detail-actions button[data-action="cancel"]').count()).toBe(0);
});

test("the queue's shared limits are shown, and Concurrency… sets the queue-wide one after asking", async () => {
  const orders = queue('orders');
  await orders.setGlobalConcurrency(3);
  await orders.setGroupOverride('vip', { concurrency: 8 });
  const p = await open({ queues: [orders], guard: () => true });
  await p.goto(server!.url);
  await p.locator('#queue-limits', { hasText: 'concurrency 3 · own limits vip: 8' }).waitFor();
  const asked: string[] = [];
  p.once('dialog', (dialog) => void (asked.push(dialog.message()), dialog.accept('12')));
  await p.locator('#set-concurrency').click();
  await p.locator('#status', { hasText: 'concurrency of orders: 12' }).waitFor();
  expect(asked).toEqual(['Most jobs of orders leased at once by all workers together (0: no limit):']);
  expect(await orders.getGlobalConcurrency()).toBe(12);
  await p.locator('#queue-limits', { hasText: 'concurrency 12' }).waitFor();
  p.once('dialog', (dialog) => void dialog.accept('lots'));
  await p.locator('#set-concurrency').click();
  await p.locator('#status', { hasText: 'The limit must be a whole number' }).waitFor();
  expect(await orders.getGlobalConcurrency()).toBe(12);
});

test('the first paint says the queues are loading, and a failed first read says why', async () => {
  const emails = queue('emails');
  const reports = queue('reports');
  await emails.add({ to: 'ada@example.com' }, { jobId: 'welcome-ada' });
  await reports.add({ month: '2026-01' }, { jobId: 'report-2026-01' });
  const p = await open({ queues: [emails, reports], guard: () => true });
  // the server answers as always; the browser holds its answers back until released
  let releaseOverview!: () => void;
  const overviewHeld = new Promise<void>((resolve) => (releaseOverview = resolve));
  await p.route((url) => url.pathname.endsWith('/api/queues'), async (route) => {
    await overviewHeld;
    await route.continue();
  });
  await p.goto(server!.url);
  await p.locator('#queue-table tbody', { hasText: 'Loading' }).waitFor();
  await shot(p, 'loading.png');
  releaseOverview();
  await p.locator('#jobs tr[data-job-id="welcome-ada"]').waitFor();
  expect(await p.locator('#queue-table tbody').textContent()).not.toContain('Loading');

  // another queue: its jobs table says loading, not the last queue's rows
  let releaseJobs!: () => void;
  const jobsHeld = new Promise<void>((resolve) => (releaseJobs = resolve));
  await p.route((url) => url.pathname.endsWith('/api/queues/reports/jobs'), async (route) => {
    await jobsHeld;
    await route.continue();
  });
  await p.locator('#queue-table tr[data-queue="reports"]').click();
  await p.locator('#jobs tbody', { hasText: 'Loading' }).waitFor();
  expect(await p.locator('#jobs tr[data-job-id="welcome-ada"]').count()).toBe(0);
  releaseJobs();
  await p.locator('#jobs tr[data-job-id="report-2026-01"]').waitFor();

  // a first read the server refuses: the table says so instead of loading for ever
  await p.close();
  await server!.close();
  server = await startDashboard({ queues: [emails], guard: (req) => !req.url!.endsWith('/api/queues') });
  page = await browser.context.newPage();
  await page.goto(server.url);
  await page.locator('#queue-table tbody', { hasText: 'Could not load the queues: not allowed' }).waitFor();
});

test("ids that look like URL dot segments are shown and managed from the page ('.' and '..' cannot be added)", async () => {
  const odd = queue('odd');
  const ids = ['...', '.hidden', '%2e%2E', 'a/../b', '..%2f'];
  for (const id of ids) await odd.add({ id }, { jobId: id });
  await expect(odd.add({}, { jobId: '..' })).rejects.toThrow("must not be '..'");
  const p = await open({ queues: [odd], guard: () => true });
  p.on('dialog', (dialog) => void dialog.accept());
  await p.goto(server!.url);
  for (const id of ids) {
    const row = p.locator(`#jobs tr[data-job-id="${id.replace(/"/g, '\\"')}"]`);
    await row.click();
    await p.locator('#detail-title').filter({ hasText: `odd / ${id}` }).waitFor();
    expect(await p.locator('#detail-blocks').textContent()).toContain(JSON.stringify(id));
    await p.locator('#detail-actions button[data-action="remove"]').click();
    await waitForValue(async () => ((await odd.getJob(id)) === null ? true : undefined), `job '${id}' removed`, 5000);
    await row.waitFor({ state: 'detached' });
  }
  expect((await odd.counts()).pending).toBe(0);
});

test("a partitioned queue is one row, its badge giving each partition's counts; its jobs page across the partitions", async () => {
  const clicks = new PartitionedQueue<{ n: number }>('clicks', { connection: redis.url, prefix: uniquePrefix(), partitions: 3 });
  try {
    await clicks.addBulk(Array.from({ length: 6 }, (_, n) => ({ data: { n } })));
    const p = await open({ queues: [clicks], guard: () => true });
    await p.goto(server!.url);
    const badge = p.locator('#queue-table tr[data-queue="clicks"] .badge-partitions');
    await badge.waitFor();
    expect(await badge.textContent()).toBe('3 partitions');
    const title = (await badge.getAttribute('title'))!.split('\n');
    expect(title).toHaveLength(3);
    expect(title.map((l) => Number(/: (\d+) pending/.exec(l)![1])).reduce((a, b) => a + b, 0)).toBe(6);
    expect(await p.locator('#queue-table tbody tr').count()).toBe(1);
    await p.locator('#jobs tr[data-job-id]').nth(5).waitFor();
    expect(await p.locator('#jobs tr[data-job-id]').count()).toBe(6);
  } finally {
    await clicks.close();
  }
});
