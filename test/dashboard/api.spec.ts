/**
 * The dashboard's HTTP API through node:http against a real Redis: reads, pages, one job,
 * the actions and their guard and CSRF checks, who may use it (Host, the default without a
 * guard, a challenge), the throughput recorder.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, ValidationError, Worker, type WorkerInfo } from '../../lib/index.js';
import type { DashboardAccess, JobList, QueueOverview, Throughput } from '../../lib/dashboard/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitForValue } from '../support/wait.js';
import { createDashboard } from '../../lib/dashboard/index.js';
import { act, raw, startDashboard, type DashboardServer } from './dashboard-server.js';

let redis: TestRedis;
const queues: Queue[] = [];
const servers: DashboardServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
  while (queues.length) await queues.pop()!.close();
});
afterAll(() => redis.stop());

function queue<D = unknown>(name: string): Queue<D> {
  const q = new Queue<D>(name, { connection: redis.url, prefix: uniquePrefix() });
  queues.push(q as Queue);
  return q;
}

async function dashboard(options: Parameters<typeof startDashboard>[0]): Promise<DashboardServer> {
  const s = await startDashboard(options);
  servers.push(s);
  return s;
}

async function json<T>(res: Response | Promise<Response>, status = 200): Promise<T> {
  const r = await res;
  const body = (await r.json()) as T;
  expect({ status: r.status, body }).toMatchObject({ status });
  return body;
}

/** A dead letter: leased once and rejected with `reason`. */
async function deadLetter(q: Queue, data: unknown, jobId: string, reason = 'boom'): Promise<void> {
  await q.add(data, { jobId, attempts: 1 });
  const [lease] = await q.lease({ count: 1 });
  expect(lease?.job.id).toBe(jobId);
  expect(await q.nack(lease!, { error: new Error(reason) })).toBe(true);
}

const allowAll = () => true;

describe('reads', () => {
  test('the page and its files, under the base path only, with headers that forbid framing and inline scripts', async () => {
    const s = await dashboard({ queues: [queue('a')], basePath: '/admin/queues/' });
    const page = await fetch(s.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(await page.text()).toContain('<script src="app.js" defer></script>');
    expect((await fetch(`${s.url}app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${s.url}style.css`)).status).toBe(200);
    const bare = await fetch(s.url.replace(/\/$/, ''), { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/admin/queues/']);
    expect((await fetch(s.url.replace('/admin/queues/', '/elsewhere'))).status).toBe(404);
    expect((await fetch(`${s.url}nothing.js`)).status).toBe(404);
  });

  test('the overview lists every queue in order with its counts', async () => {
    const a = queue('emails');
    const b = queue('reports');
    await a.add({ n: 1 });
    await a.add({ n: 2 }, { delayMs: 60_000 });
    await b.pause();
    const s = await dashboard({ queues: [a, b], refreshMs: 1500 });
    const body = await json<{ refreshMs: number; queues: QueueOverview[] }>(fetch(`${s.url}api/queues`));
    expect(body.refreshMs).toBe(1500);
    expect(body.queues.map((q) => [q.name, q.counts?.pending, q.counts?.delayed, q.counts?.paused])).toEqual([
      ['emails', 1, 1, false],
      ['reports', 0, 0, true],
    ]);
  });

  test('jobs by state in pages, both orders, their total in the overview; bad parameters are 400', async () => {
    const q = queue('pages');
    for (let i = 1; i <= 5; i++) await q.add({ i }, { jobId: `j${i}` });
    const s = await dashboard({ queues: [q] });
    const page = (query: string) => json<JobList>(fetch(`${s.url}api/queues/pages/jobs?${query}`));
    const first = await page('state=pending&start=0&end=1');
    expect(first).toEqual({ state: 'pending', start: 0, end: 1, jobs: [expect.objectContaining({ id: 'j1' }), expect.objectContaining({ id: 'j2' })] });
    // the page's total is the overview's count of the state, read in the same refresh
    expect((await json<{ queues: QueueOverview[] }>(fetch(`${s.url}api/queues`))).queues[0]?.counts?.pending).toBe(5);
    expect(first.jobs[0]).toMatchObject({ id: 'j1', state: 'pending', dataPreview: '{"i":1}', failures: 0 });
    expect((await page('state=pending&start=2&end=3&order=desc')).jobs.map((j) => j.id)).toEqual(['j3', 'j2']);
    expect((await page('state=dead')).jobs).toEqual([]);
    for (const bad of ['state=gone', 'start=-1', 'start=3&end=1', 'order=up', 'start=0&end=100000', 'start=0&end=500']) {
      expect((await json<{ error: string }>(fetch(`${s.url}api/queues/pages/jobs?${bad}`), 400)).error).toBeTruthy();
    }
    // the engine's own checks answer, naming the field
    expect((await json<{ error: string }>(fetch(`${s.url}api/queues/pages/jobs?state=gone`), 400)).error).toMatch(/^state: must be one of/);
    expect((await json<{ error: string }>(fetch(`${s.url}api/queues/pages/jobs?order=up`), 400)).error).toMatch(/^order: must be one of/);
    expect((await page('start=0&end=499')).jobs).toHaveLength(5); // 500 jobs: the largest page
    expect((await json<{ error: string }>(fetch(`${s.url}api/queues/nope/jobs`), 404)).error).toBe("no queue 'nope' on this dashboard");
  });

  test("a queue's live workers, from any process; none once they closed; the guard sees the read", async () => {
    const q = queue('crew');
    const seen: DashboardAccess[] = [];
    const s = await dashboard({ queues: [q], guard: (_req: IncomingMessage, access: DashboardAccess) => (seen.push(access), true) });
    expect(await json<WorkerInfo[]>(fetch(`${s.url}api/queues/crew/workers`))).toEqual([]);
    const w = new Worker(new Queue(q.name, { connection: redis.url, prefix: q.prefix }), async () => undefined, { concurrency: 4, appName: 'crew-app' });
    try {
      const listed = await waitForValue(async () => (await json<WorkerInfo[]>(fetch(`${s.url}api/queues/crew/workers`)))[0], 'the worker listed', 10_000);
      expect(listed).toMatchObject({ queue: 'crew', pid: process.pid, appName: 'crew-app', concurrency: 4, running: 0 });
    } finally {
      await w.close();
      await w.queue.close();
    }
    expect(await json<WorkerInfo[]>(fetch(`${s.url}api/queues/crew/workers`))).toEqual([]);
    expect(seen).toContainEqual({ kind: 'read', queue: 'crew' });
    expect((await fetch(`${s.url}api/queues/crew/workers`, { method: 'POST' })).status).toBe(405);
  });

  test('long data is cut in lists and whole in the job; a job shows its error, progress and logs', async () => {
    const q = queue<{ text: string }>('detail');
    const text = 'x'.repeat(500);
    await q.add({ text }, { jobId: 'big/one', attempts: 3 });
    const [lease] = await q.lease({ count: 1 });
    await q.updateProgress(lease!, { done: 2, of: 3 });
    await q.log(lease!, 'step two');
    await q.nack(lease!, { error: new Error('flaky upstream'), delayMs: 60_000 });
    const s = await dashboard({ queues: [q] });
    const list = await json<JobList>(fetch(`${s.url}api/queues/detail/jobs?state=delayed`));
    expect(list.jobs[0]!.dataPreview).toHaveLength(160);
    expect(list.jobs[0]).toMatchObject({ id: 'big/one', failures: 1, maxAttempts: 3, lastError: expect.stringContaining('flaky upstream') });
    const job = await json<Record<string, unknown>>(fetch(`${s.url}api/queues/detail/jobs/${encodeURIComponent('big/one')}`));
    expect(job).toMatchObject({ id: 'big/one', state: 'delayed', data: { text }, failures: 1, maxAttempts: 3, dequeues: 1, progress: { done: 2, of: 3 }, logs: ['step two'] });
    expect(job.lastError).toContain('flaky upstream');
    expect((await json<{ error: string }>(fetch(`${s.url}api/queues/detail/jobs/missing`), 404)).error).toBe("no job 'missing' in queue 'detail'");
  });
});

describe('actions', () => {
  test('without a guard every action is refused and nothing changes', async () => {
    const q = queue('unguarded');
    const s = await dashboard({ queues: [q] });
    const r = await json<{ error: string }>(act(`${s.url}api/queues/unguarded/pause`), 403);
    expect(r.error).toContain('actions need a guard');
    expect((await q.counts()).paused).toBe(false);
    await deadLetter(q, { n: 1 }, 'dead-1');
    expect((await json<{ error: string }>(act(`${s.url}api/queues/unguarded/jobs/dead-1/retry`), 403)).error).toContain('actions need a guard');
    expect((await q.getJob('dead-1'))?.state).toBe('dead');
  });

  test('CSRF: an action needs POST, the header and a JSON body', async () => {
    const q = queue('csrf');
    const s = await dashboard({ queues: [q], guard: allowAll });
    const url = `${s.url}api/queues/csrf/pause`;
    await json(act(url, {}, {}), 403);
    await json(fetch(url, { method: 'POST', headers: { 'x-relq-dashboard': '1', 'content-type': 'text/plain' }, body: '{}' }), 415);
    await json(fetch(url), 405);
    await json(fetch(url, { method: 'POST', headers: { 'x-relq-dashboard': '1', 'content-type': 'application/json' }, body: '{oops' }), 400);
    expect((await q.counts()).paused).toBe(false);
    await json(act(url), 200);
    expect((await q.counts()).paused).toBe(true);
  });

  test('CSRF: an action from another site or origin is refused, one from the same origin goes through', async () => {
    const q = queue('origin');
    const s = await dashboard({ queues: [q], guard: allowAll });
    const url = `${s.url}api/queues/origin/pause`;
    const host = new URL(s.url).host;
    const withHeaders = (headers: Record<string, string>) => act(url, {}, { 'x-relq-dashboard': '1', ...headers });
    expect((await json<{ error: string }>(withHeaders({ 'sec-fetch-site': 'cross-site' }), 403)).error).toContain('Sec-Fetch-Site');
    await json(withHeaders({ 'sec-fetch-site': 'same-site', origin: `http://${host}` }), 403); // Sec-Fetch-Site decides where sent
    expect((await json<{ error: string }>(withHeaders({ origin: 'http://evil.example' }), 403)).error).toContain('Origin');
    await json(withHeaders({ origin: 'null' }), 403);
    expect((await q.counts()).paused).toBe(false);
    expect(await json(withHeaders({ 'sec-fetch-site': 'same-origin', origin: `http://${host}` }))).toEqual({ paused: true });
    expect(await json(withHeaders({ origin: `http://${host}` }))).toEqual({ paused: true }); // a browser without Sec-Fetch-Site
    expect(await json(withHeaders({}))).toEqual({ paused: true }); // neither header: curl, a server
    expect((await q.counts()).paused).toBe(true);
  });

  test('the guard sees each request and what it asks for; false answers 403', async () => {
    const q = queue('guarded');
    const seen: DashboardAccess[] = [];
    const guard = (req: IncomingMessage, access: DashboardAccess) => {
      seen.push(access);
      return access.kind === 'read' || req.headers.authorization === 'Bearer ops';
    };
    const s = await dashboard({ queues: [q], guard });
    await json(fetch(`${s.url}api/queues`));
    await json(act(`${s.url}api/queues/guarded/pause`), 403);
    await json(act(`${s.url}api/queues/guarded/pause`, {}, { 'x-relq-dashboard': '1', authorization: 'Bearer ops' }));
    expect(seen).toEqual([{ kind: 'read' }, { kind: 'action', queue: 'guarded', action: 'pause' }, { kind: 'action', queue: 'guarded', action: 'pause' }]);
    const closed = await dashboard({ queues: [queue('closed')], guard: async () => false });
    expect((await fetch(closed.url)).status).toBe(403);
    expect((await fetch(`${closed.url}api/queues`)).status).toBe(403);
  });

  test('retry a dead letter or a completed job, promote, remove, pause and resume, redrive and clean, each through the engine', async () => {
    const q = queue('ops');
    const s = await dashboard({ queues: [q], guard: allowAll });
    const api = `${s.url}api/queues/ops`;
    await deadLetter(q, { n: 1 }, 'dead-1');
    await deadLetter(q, { n: 2 }, 'dead-2');
    await deadLetter(q, { n: 3 }, 'dead-3');
    expect(await json(act(`${api}/jobs/dead-1/retry`))).toEqual({ retried: true, from: 'dead' });
    expect(await q.getJob('dead-1')).toMatchObject({ state: 'pending', failures: 1, failuresBeforeRedrive: 1, retries: 1 });
    // not finished any more: refused, nothing written
    expect((await json<{ error: string }>(act(`${api}/jobs/dead-1/retry`), 409)).error).toBe(
      "job dead-1 of queue 'ops' cannot be retried: it is pending: only completed and dead jobs are retried",
    );
    expect((await json<{ error: string }>(act(`${api}/jobs/nope/retry`), 409)).error).toContain('no such job');
    expect((await json<{ error: string }>(act(`${api}/jobs/dead-1/retry`, { bogus: 1 }), 400)).error).toBe('unknown field(s) bogus; allowed: none');
    await q.add({ n: 4 }, { jobId: 'done-1', priority: 9 });
    const [done] = await q.lease();
    expect(await q.ack(done!, 'ok')).toBe(true);
    expect(await json(act(`${api}/jobs/done-1/retry`))).toEqual({ retried: true, from: 'completed' });
    expect(await q.getJob('done-1')).toMatchObject({ state: 'pending', retries: 1 });
    expect(await q.remove('done-1')).toBe(true);

    await q.add({ later: true }, { jobId: 'later', delayMs: 60_000 });
    expect(await json(act(`${api}/jobs/later/promote`))).toEqual({ promoted: true });
    expect((await q.getJob('later'))?.state).toBe('pending');

    const [lease] = await q.lease({ count: 1 });
    const held = lease!.job.id;
    expect((await json<{ error: string }>(act(`${api}/jobs/${held}/remove`), 409)).error).toContain('is leased');
    expect(await json(act(`${api}/jobs/${held}/remove`, { force: true }))).toEqual({ removed: true });
    expect(await q.getJob(held)).toBeNull();
    expect((await json<{ error: string }>(act(`${api}/jobs/x/remove`, { force: 'yes' }), 400)).error).toContain('force');
    await q.add({ kept: true }, { jobId: 'kept' });
    expect((await json<{ error: string }>(act(`${api}/jobs/kept/remove`, { force: true, bogus: 1 }), 400)).error).toBe('unknown field(s) bogus; allowed: force');
    expect((await q.getJob('kept'))?.state).toBe('pending');

    expect((await json<{ error: string }>(act(`${api}/pause`, { bogus: 1 }), 400)).error).toBe('unknown field(s) bogus; allowed: none');
    expect((await json<{ error: string }>(act(`${api}/jobs/later/promote`, { bogus: 1 }), 400)).error).toBe('unknown field(s) bogus; allowed: none');
    expect((await q.counts()).paused).toBe(false); // refused before anything was done
    expect(await json(act(`${api}/pause`))).toEqual({ paused: true });
    expect((await q.counts()).paused).toBe(true);
    expect(await json(act(`${api}/resume`))).toEqual({ paused: false });
    expect((await q.counts()).paused).toBe(false);

    expect(await json(act(`${api}/redrive`, { limit: 1 }))).toEqual({ ids: ['dead-2'] });
    expect((await q.getJob('dead-2'))?.state).toBe('pending');
    expect((await json<{ error: string }>(act(`${api}/redrive`, { limit: 1, bogus: 1 }), 400)).error).toContain('bogus');
    expect(await json(act(`${api}/clean`, { state: 'dead' }))).toEqual({ ids: ['dead-3'] });
    expect(await q.getJob('dead-3')).toBeNull();
    expect((await json<{ error: string }>(act(`${api}/clean`, { state: 'pending' }), 400)).error).toBeTruthy();
    await json(act(`${api}/jobs/dead-2/pause`), 404);
    await json(fetch(`${api}/jobs/%E0%A4%A`), 400);
  });
});

describe('cancel', () => {
  test('a waiting job is removed, a running one dead-lettered or retried; a finished one answers false; the guard and the header are needed', async () => {
    const q = queue('cancels');
    const s = await dashboard({ queues: [q], guard: (_req, access) => access.kind === 'read' || access.action === 'cancel' });
    const api = `${s.url}api/queues/cancels`;
    await q.add({ n: 1 }, { jobId: 'waiting' });
    await q.add({ n: 2 }, { jobId: 'running', attempts: 3 });
    await q.add({ n: 3 }, { jobId: 'again', attempts: 3, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
    // CSRF: without the header nothing happens
    await json(act(`${api}/jobs/waiting/cancel`, {}, {}), 403);
    expect((await q.getJob('waiting'))?.state).toBe('pending');
    expect(await json(act(`${api}/jobs/waiting/cancel`))).toEqual({ cancelled: 'removed' });
    expect(await q.getJob('waiting')).toBeNull();
    const [running, again] = await q.lease({ count: 2 });
    expect(await json(act(`${api}/jobs/running/cancel`, { reason: 'from the dashboard' }))).toEqual({ cancelled: 'dead' });
    expect(await q.getJob('running')).toMatchObject({ state: 'dead', lastError: 'CancelledError: job running was cancelled: from the dashboard' });
    expect(await json(act(`${api}/jobs/again/cancel`, { outcome: 'retry' }))).toEqual({ cancelled: 'retried' });
    expect(await q.getJob('again')).toMatchObject({ state: 'pending', failures: 1 });
    expect(await q.ack(running!)).toBe(false);
    expect(await q.ack(again!)).toBe(false);
    expect(await json(act(`${api}/jobs/running/cancel`))).toEqual({ cancelled: false });
    expect(await json(act(`${api}/jobs/nope/cancel`))).toEqual({ cancelled: false });
    expect((await json<{ error: string }>(act(`${api}/jobs/again/cancel`, { outcome: 'later' }), 400)).error).toContain('outcome');
    expect((await json<{ error: string }>(act(`${api}/jobs/again/cancel`, { force: true }), 400)).error).toBe('unknown field(s) force; allowed: outcome, reason');
    expect((await q.getJob('again'))?.state).toBe('pending');
    // the guard sees the action by name: another one is refused
    await json(act(`${api}/jobs/again/remove`), 403);
  });
});

describe('concurrency', () => {
  test('the shared limits are read and changed through the engine; bad values are 400 and change nothing; the guard names the action', async () => {
    const q = queue('limits');
    const s = await dashboard({ queues: [q], guard: (_req, access) => access.kind === 'read' || access.action === 'concurrency' || access.action === 'groupOverride' });
    const api = `${s.url}api/queues/limits`;
    expect(await json(fetch(`${api}/settings`))).toEqual({ globalConcurrency: 0, groupConcurrency: 0, groupOverrides: {} });
    expect(await json(act(`${api}/concurrency`, { limit: 4 }))).toEqual({ globalConcurrency: 4 });
    expect(await q.getGlobalConcurrency()).toBe(4);
    expect(await json(act(`${api}/groupOverride`, { group: 'vip', override: { concurrency: 8 } }))).toEqual({ group: 'vip', override: { concurrency: 8 } });
    expect(await json(fetch(`${api}/settings`))).toEqual({ globalConcurrency: 4, groupConcurrency: 0, groupOverrides: { vip: { concurrency: 8 } } });
    expect((await json<{ error: string }>(act(`${api}/concurrency`, { limit: -1 }), 400)).error).toContain('limit');
    expect((await json<{ error: string }>(act(`${api}/concurrency`, { limit: '9' }), 400)).error).toContain('limit');
    expect((await json<{ error: string }>(act(`${api}/concurrency`, { limit: 2, more: 1 }), 400)).error).toBe('unknown field(s) more; allowed: limit');
    expect((await json<{ error: string }>(act(`${api}/groupOverride`, { group: 'a{b}', override: { concurrency: 1 } }), 400)).error).toContain('group');
    await json(act(`${api}/concurrency`, { limit: 2 }, {}), 403); // no CSRF header
    expect(await q.getGlobalConcurrency()).toBe(4);
    expect(await json(act(`${api}/groupOverride`, { group: 'vip', override: null }))).toEqual({ group: 'vip', override: null });
    expect(await q.getGroupOverrides()).toEqual({});
    await json(act(`${api}/pause`), 403); // another action: refused by the guard
  });
});

const ACTION = { 'content-type': 'application/json', 'x-relq-dashboard': '1' };

describe('who may use it', () => {
  test('a Host it does not answer to is refused, reads included, whatever the guard says (DNS rebinding)', async () => {
    const q = queue('hosts');
    await q.add({ card: '4111-secret' }, { jobId: 'payment-1' });
    const s = await dashboard({ queues: [q], guard: allowAll, allowedHosts: ['queues.example', '.corp.example'] });
    const port = new URL(s.url).port;
    for (const host of ['attacker.example', `attacker.example:${port}`, 'queues.example.attacker.example', 'evilcorp.example', '127.0.0.1.nip.example', 'localhost.attacker.example']) {
      for (const path of ['', 'api/queues', 'api/queues/hosts/jobs', 'api/queues/hosts/jobs/payment-1']) {
        const r = await raw(`${s.url}${path}`, { headers: { host } });
        expect({ host, path, status: r.status }).toEqual({ host, path, status: 403 });
        expect(r.body).not.toContain('4111-secret');
        expect(JSON.parse(r.body).error).toBe(`host ${JSON.stringify(host)} is not allowed: the dashboard answers to localhost, IP addresses and the names in allowedHosts`);
      }
      expect((await raw(`${s.url}api/queues/hosts/pause`, { method: 'POST', headers: { ...ACTION, host, 'sec-fetch-site': 'same-origin' }, body: '{}' })).status).toBe(403);
    }
    expect((await q.counts()).paused).toBe(false);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', 'app.localhost', 'localhost.', `[::1]:${port}`, '10.1.2.3', 'queues.example', 'QUEUES.example:8443', 'corp.example', 'ops.corp.example']) {
      const r = await raw(`${s.url}api/queues/hosts/jobs/payment-1`, { headers: { host } });
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
    }
  });

  test('without a guard, reads answer only requests from this machine: a loopback peer and host name, no proxy', async () => {
    const q = queue('local');
    await q.add({ card: '4111-secret' }, { jobId: 'payment-1' });
    const s = await dashboard({ queues: [q], allowedHosts: ['queues.example'] });
    expect(s.warnings).toEqual([
      "relq dashboard at '/': no guard, so it answers reads only to requests from this machine (a loopback address and host name, not through a proxy) and refuses every action; give it a guard to let others in",
    ]);
    const job = `${s.url}api/queues/local/jobs/payment-1`;
    expect((await raw(job)).status).toBe(200);
    expect((await raw(job, { headers: { host: 'localhost' } })).status).toBe(200);
    const refused: Array<Record<string, string>> = [
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9;proto=https' },
      { 'x-real-ip': '203.0.113.9' },
      { host: 'queues.example' }, // allowed, but a name for others to use: through a proxy
    ];
    for (const headers of refused) {
      const r = await raw(job, { headers });
      expect({ headers, status: r.status }).toEqual({ headers, status: 403 });
      expect(JSON.parse(r.body).error).toBe('without a guard the dashboard answers only to this machine (loopback, not through a proxy): give it a guard, or publicReads: true');
    }
    // a peer that is no loopback address: here a Unix socket, as a proxy on this machine uses
    await viaUnixSocket(s, async (socketPath) => {
      for (const path of ['', 'api/queues', 'api/queues/local/jobs/payment-1']) {
        const r = await raw(`${s.url}${path}`, { socketPath, headers: { host: 'localhost' } });
        expect({ path, status: r.status }).toEqual({ path, status: 403 });
        expect(r.body).not.toContain('4111-secret');
      }
    });
    expect((await raw(`${s.url}api/queues/local/pause`, { method: 'POST', headers: ACTION, body: '{}' })).status).toBe(403);
  });

  test('publicReads: reads from anywhere, actions still refused, and it says so at start-up', async () => {
    const q = queue('public');
    await q.add({ n: 1 }, { jobId: 'j1' });
    const s = await dashboard({ queues: [q], basePath: '/queues', publicReads: true });
    expect(s.warnings).toEqual([
      "relq dashboard at '/queues': publicReads is on, so anyone who reaches it reads every job's data and results; actions are refused without a guard",
    ]);
    expect((await raw(`${s.url}api/queues/public/jobs/j1`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    await viaUnixSocket(s, async (socketPath) => {
      expect((await raw(`${s.url}api/queues/public/jobs/j1`, { socketPath, headers: { host: 'localhost' } })).status).toBe(200);
      expect((await raw(`${s.url}api/queues/public/pause`, { socketPath, method: 'POST', headers: { ...ACTION, host: 'localhost' }, body: '{}' })).status).toBe(403);
    });
    expect((await raw(`${s.url}api/queues/public/pause`, { method: 'POST', headers: ACTION, body: '{}' })).status).toBe(403);
    expect((await q.counts()).paused).toBe(false);
    // with a guard it says nothing: the guard decides
    expect((await dashboard({ queues: [queue('guarded')], guard: allowAll })).warnings).toEqual([]);
  });

  test('without onWarning, the start-up line is a Node process warning', () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      createDashboard({ queues: [queue('warned')] }).close();
      expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining("relq dashboard at '/': no guard"), { type: 'RelqWarning', code: 'RELQ_DASHBOARD_ACCESS' });
    } finally {
      emitWarning.mockRestore();
    }
  });

  test('with a challenge, a refused read answers 401 and asks for credentials; a refused action answers 403', async () => {
    const q = queue('challenged');
    const ops = `Basic ${Buffer.from('ops:s3cret').toString('base64')}`;
    const viewer = `Basic ${Buffer.from('viewer:pw').toString('base64')}`;
    const challenge = 'Basic realm="relq dashboard", charset="UTF-8"';
    const s = await dashboard({
      queues: [q],
      challenge,
      guard: (req, access) => req.headers.authorization === ops || (req.headers.authorization === viewer && access.kind === 'read'),
    });
    for (const authorization of [undefined, `Basic ${Buffer.from('ops:wrong').toString('base64')}`]) {
      const r = await raw(s.url, { headers: authorization ? { authorization } : {} });
      expect([r.status, r.headers['www-authenticate'], r.headers['x-frame-options']]).toEqual([401, challenge, 'DENY']);
      expect(JSON.parse(r.body)).toEqual({ error: 'sign in to use the dashboard' });
    }
    expect((await raw(s.url, { headers: { authorization: viewer } })).status).toBe(200);
    const refused = await raw(`${s.url}api/queues/challenged/pause`, { method: 'POST', headers: { ...ACTION, authorization: viewer }, body: '{}' });
    expect([refused.status, refused.headers['www-authenticate']]).toEqual([403, undefined]);
    expect((await raw(`${s.url}api/queues/challenged/pause`, { method: 'POST', headers: { ...ACTION, authorization: ops }, body: '{}' })).status).toBe(200);
    expect((await q.counts()).paused).toBe(true);
  });
});

/** Serves the dashboard's handler on a Unix socket too (in a temp dir removed afterwards) for `use`. */
async function viaUnixSocket(s: DashboardServer, use: (socketPath: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relq-dashboard-sock-'));
  const socketPath = join(dir, 'dashboard.sock');
  const server = createServer((req, res) => s.handler(req, res));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  try {
    await use(socketPath);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('throughput', () => {
  test('counts completed, failed and dead per interval from the queue events, and stops listening on close', async () => {
    const q = queue('tp');
    const s = await dashboard({ queues: [q], throughput: { intervalMs: 60_000, points: 10 } });
    const subscribers = async () => ((await q.client.call('PUBSUB', 'SHARDNUMSUB', q.keys.byName.events)) as [string, number])[1];
    // subscribed, and announced: scripts publish only while the listeners key exists
    await waitForValue(async () => ((await subscribers()) === 1 && (await q.client.exists(q.keys.byName.listeners)) === 1 ? true : undefined), 'the dashboard listening', 5000);
    for (let i = 0; i < 3; i++) await q.add(i);
    for (let i = 0; i < 3; i++) {
      const [lease] = await q.lease({ count: 1 });
      await q.ack(lease!, 'ok');
    }
    await q.add('retried', { attempts: 2 });
    const [first] = await q.lease({ count: 1 });
    await q.nack(first!, { error: 'once', delayMs: 0 });
    const [second] = await q.lease({ count: 1 });
    await q.nack(second!, { error: 'twice' });
    const sum = (tp: Throughput) => tp.points.reduce((a, p) => ({ completed: a.completed + p.completed, failed: a.failed + p.failed, dead: a.dead + p.dead }), { completed: 0, failed: 0, dead: 0 });
    const tp = await waitForValue(async () => {
      const t = await json<Throughput>(fetch(`${s.url}api/queues/tp/throughput`));
      return sum(t).dead === 1 ? t : undefined;
    }, 'the dead letter counted', 5000);
    expect(sum(tp)).toEqual({ completed: 3, failed: 2, dead: 1 });
    expect(tp.intervalMs).toBe(60_000);
    expect(tp.since).toBeLessThanOrEqual(Date.now());
    expect(tp.samples.length).toBeGreaterThanOrEqual(1);
    expect(tp.samples[0]).toEqual(expect.objectContaining({ pending: expect.any(Number), dead: expect.any(Number) }));
    s.handler.close();
    await waitForValue(async () => ((await subscribers()) === 0 ? true : undefined), 'the dashboard unsubscribed', 5000);
  });

  test("a queue that keeps a metrics history: per-minute points and run times from Redis, the same for a dashboard started later", async () => {
    const q = new Queue('tp-kept', { connection: redis.url, prefix: uniquePrefix(), metrics: { keepMinutes: 60 } });
    queues.push(q);
    const first = await dashboard({ queues: [q] });
    await q.add(1);
    await q.add(2, { attempts: 1 });
    const [ok, bad] = await q.lease({ count: 2 });
    await q.ack(ok!, 'ok');
    await q.nack(bad!, { error: 'no' });
    const sum = (tp: Throughput) => tp.points.reduce((a, p) => ({ completed: a.completed + p.completed, failed: a.failed + p.failed, dead: a.dead + p.dead }), { completed: 0, failed: 0, dead: 0 });
    const tp = await json<Throughput>(fetch(`${first.url}api/queues/tp-kept/throughput`));
    expect(tp.source).toBe('history');
    expect(tp.intervalMs).toBe(60_000);
    expect(sum(tp)).toEqual({ completed: 1, failed: 0, dead: 1 });
    expect(tp.points.every((p) => p.t % 60_000 === 0)).toBe(true);
    expect(tp.points.reduce((n, p) => n + (p.runTime?.count ?? 0), 0)).toBe(2);
    // a dashboard that was not running then (another process's, or after a restart) draws the same
    first.handler.close();
    const later = await dashboard({ queues: [q] });
    const again = await json<Throughput>(fetch(`${later.url}api/queues/tp-kept/throughput`));
    expect(again.source).toBe('history');
    expect(sum(again)).toEqual({ completed: 1, failed: 0, dead: 1 });
    // a queue without it: this process's recorder
    const plain = await dashboard({ queues: [queue('tp-plain')] });
    expect((await json<Throughput>(fetch(`${plain.url}api/queues/tp-plain/throughput`))).source).toBe('process');
  });

  test('options are checked before anything listens', async () => {
    const q = queue('opts');
    await expect(startDashboard({ queues: [] })).rejects.toThrow('queues: must be a non-empty array');
    await expect(startDashboard({ queues: [q, q] })).rejects.toThrow("queue 'opts' is listed twice");
    await expect(startDashboard({ queues: [q], basePath: '/a b' })).rejects.toThrow('basePath');
    await expect(startDashboard({ queues: [q], throughput: { intervalMs: 5 } })).rejects.toThrow('throughput.intervalMs');
    await expect(startDashboard({ queues: [q], guard: 'yes' as never })).rejects.toThrow('guard: must be a function');
    const invalid = async (options: Record<string, unknown>, field: string, message: string | RegExp) => {
      const err = await startDashboard({ queues: [q], ...options } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
      expect((err as Error).message).toMatch(message);
    };
    await invalid({ guard: allowAll, publicReads: true }, 'publicReads', 'give a guard or publicReads, not both');
    await invalid({ publicReads: 'yes' }, 'publicReads', 'must be true or false');
    await invalid({ challenge: 'Basic realm="x"' }, 'challenge', 'needs a guard');
    await invalid({ guard: allowAll, challenge: 'Basic\r\nSet-Cookie: x=1' }, 'challenge', 'control characters');
    await invalid({ allowedHosts: 'queues.example' }, 'allowedHosts', 'must be an array of host names');
    for (const [i, bad] of [['0', 'https://queues.example'], ['0', 'queues.example:8443'], ['0', 'a b'], ['0', 42], ['0', '*']] as const) {
      await invalid({ allowedHosts: [bad] }, `allowedHosts[${i}]`, 'must be a host name without scheme or port');
    }
    await invalid({ onWarning: 'log' }, 'onWarning', 'must be a function');
    await invalid({ guards: allowAll }, 'dashboard options', "unknown option 'guards'");
  });
});

describe('Express', () => {
  /** What this test uses of Express (imported by name: the project has no Express typings). */
  interface ExpressApp {
    use(...handlers: unknown[]): void;
    listen(port: number, host: string, done: () => void): import('node:http').Server;
  }
  interface ExpressModule {
    (): ExpressApp;
    json(): unknown;
  }

  test('mounted under a path with app.use, behind express.json()', async () => {
    const express = ((await import('express' as string)) as { default: ExpressModule }).default;
    const q = queue('mounted');
    await deadLetter(q, { n: 1 }, 'dead-1');
    const handler = createDashboard({ queues: [q], basePath: '/admin/queues', guard: allowAll });
    const app = express();
    app.use(express.json());
    app.use('/admin/queues', handler);
    app.use((_req: unknown, res: { status(n: number): { end(s: string): void } }) => res.status(404).end('express 404'));
    const server = await new Promise<import('node:http').Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
      expect((await fetch(`${base}/admin/queues/`)).status).toBe(200);
      expect((await json<{ queues: QueueOverview[] }>(fetch(`${base}/admin/queues/api/queues`))).queues[0]?.counts?.dead).toBe(1);
      expect(await json(act(`${base}/admin/queues/api/queues/mounted/jobs/dead-1/retry`))).toEqual({ retried: true, from: 'dead' });
      expect((await q.getJob('dead-1'))?.state).toBe('pending');
      expect(await (await fetch(`${base}/elsewhere`)).text()).toBe('express 404');
    } finally {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
