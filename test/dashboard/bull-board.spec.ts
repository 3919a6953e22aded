/**
 * RelqBullBoardAdapter through bull-board's own API handlers (createBullBoard with
 * validateResponses: every answer is checked against bull-board's schemas), against a real
 * Redis. The server adapter below only collects the routes bull-board hands to a web framework.
 */
import { createBullBoard } from '@bull-board/api';
import type { AppControllerRoute, BullBoardQueues, ControllerHandlerReturnType, IServerAdapter } from '@bull-board/api/dist/types.js';
import { ConnectionError, JobLeasedError, Queue } from '../../lib/index.js';
import { RelqBullBoardAdapter } from '../../lib/dashboard/bull-board/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

/** Collects what bull-board gives a web framework: the queues and the API routes. */
class RouteCollector implements IServerAdapter {
  queues!: BullBoardQueues;
  routes: AppControllerRoute[] = [];
  setQueues(queues: BullBoardQueues): this {
    this.queues = queues;
    return this;
  }
  setApiRoutes(routes: AppControllerRoute[]): this {
    this.routes = routes;
    return this;
  }
  setViewsPath(): this {
    return this;
  }
  setStaticPath(): this {
    return this;
  }
  setEntryRoute(): this {
    return this;
  }
  setErrorHandler(): this {
    return this;
  }
  setUIConfig(): this {
    return this;
  }
}

let redis: TestRedis;
let queue: Queue<{ n: number }, string>;
let board: RouteCollector;

beforeAll(async () => {
  redis = await startRedis();
});
beforeEach(() => {
  queue = new Queue<{ n: number }, string>('billing', { connection: redis.url, prefix: uniquePrefix() });
  board = new RouteCollector();
  createBullBoard({ queues: [new RelqBullBoardAdapter(queue)], serverAdapter: board, options: { validateResponses: true } });
});
afterEach(() => queue.close());
afterAll(() => redis.stop());

/** Calls bull-board's handler of `method route` as its web adapters do. */
async function call(
  method: string,
  route: string,
  params: Record<string, string> = {},
  query: Record<string, string> = {},
  body: Record<string, unknown> = {},
): Promise<ControllerHandlerReturnType<any>> {
  const r = board.routes.find((x) => [x.method].flat().includes(method as never) && [x.route].flat().includes(route));
  if (!r) throw new Error(`bull-board has no route ${method} ${route}`);
  return r.handler({ queues: board.queues, uiConfig: {}, params, query, body, headers: {} });
}

async function dead(jobId: string): Promise<void> {
  await queue.add({ n: 0 }, { jobId, attempts: 1 });
  const [lease] = await queue.lease({ count: 1 });
  await queue.nack(lease!, { error: new Error(`card declined for ${jobId}`) });
}

async function complete(jobId: string): Promise<void> {
  await queue.add({ n: 1 }, { jobId });
  const [lease] = await queue.lease({ count: 1 });
  await queue.ack(lease!, 'paid');
}

test('the queue list: relq states as bull-board statuses, counts and a page of failed (dead) jobs', async () => {
  await complete('c1');
  await dead('d1');
  await queue.add({ n: 2 }, { jobId: 'w1' });
  await queue.add({ n: 3 }, { jobId: 'later', delayMs: 60_000 });
  const counts = queue.counts.bind(queue);
  let countReads = 0;
  queue.counts = () => (countReads++, counts()); // own property: the Queue object is the test's
  let res;
  try {
    res = await call('get', '/api/queues', {}, { activeQueue: 'billing', status: 'failed', page: '1', jobsPerPage: '10' });
  } finally {
    delete (queue as { counts?: unknown }).counts;
  }
  // counts, pause state and schedulers of the poll: one read
  expect(countReads).toBe(1);
  expect(res.status ?? 200).toBe(200);
  const [q] = res.body.queues;
  expect(q).toMatchObject({ name: 'billing', type: 'bullmq', isPaused: false, allowCompletedRetries: true });
  expect(q.counts).toEqual({ active: 0, waiting: 1, delayed: 1, completed: 1, failed: 1, 'waiting-children': 0 });
  expect(q.statuses).toEqual(['latest', 'waiting', 'active', 'delayed', 'completed', 'failed', 'waiting-children']);
  expect(q.jobs).toHaveLength(1);
  expect(q.jobs[0]).toMatchObject({ id: 'd1', data: { n: 0 }, isFailed: true, attempts: 1 });
  expect(q.jobs[0].failedReason).toContain('card declined for d1');

  const latest = await call('get', '/api/queues', {}, { activeQueue: 'billing', status: 'latest', page: '1', jobsPerPage: '10' });
  expect(latest.body.queues[0].jobs.map((j: { id: string }) => j.id).sort()).toEqual(['c1', 'd1', 'later', 'w1']);
});

test('one job, its logs, and the job actions through the engine', async () => {
  await complete('c1');
  await dead('d1');
  await queue.add({ n: 3 }, { jobId: 'later', delayMs: 60_000 });

  const job = await call('get', '/api/queues/:queueName/:jobId', { queueName: 'billing', jobId: 'c1' });
  expect(job.body).toMatchObject({ status: 'completed', job: { id: 'c1', returnValue: 'paid', data: { n: 1 } } });
  expect((await call('get', '/api/queues/:queueName/:jobId', { queueName: 'billing', jobId: 'nope' })).status).toBe(404);
  expect((await call('get', '/api/queues/:queueName/:jobId/logs', { queueName: 'billing', jobId: 'c1' })).body).toEqual([]);
  // the job page also asks for its BullMQ flow tree: none
  expect(await call('get', '/api/queues/:queueName/:jobId/flow', { queueName: 'billing', jobId: 'c1' }, { depth: '2', maxChildren: '20' })).toEqual({
    status: 200,
    body: { nodeId: 'c1', isFlowNode: false, flowRoot: null },
  });

  expect((await call('put', '/api/queues/:queueName/:jobId/retry', { queueName: 'billing', jobId: 'd1' })).status).toBe(204);
  expect((await queue.getJob('d1'))?.state).toBe('pending');
  expect((await call('put', '/api/queues/:queueName/:jobId/retry', { queueName: 'billing', jobId: 'c1' })).status).toBe(204);
  expect((await queue.getJob('c1'))?.state).toBe('pending');
  // bull-board itself refuses a job that has not finished (the engine would too)
  expect(await call('put', '/api/queues/:queueName/:jobId/retry', { queueName: 'billing', jobId: 'c1' })).toEqual({
    status: 400,
    body: { error: { key: 'ERRORS.JOB_NOT_RETRIABLE', options: { state: 'waiting' } } },
  });
  expect((await queue.getJob('c1'))?.state).toBe('pending');

  expect((await call('put', '/api/queues/:queueName/:jobId/promote', { queueName: 'billing', jobId: 'later' })).status).toBe(204);
  expect((await queue.getJob('later'))?.state).toBe('pending');
  expect((await call('put', '/api/queues/:queueName/:jobId/clean', { queueName: 'billing', jobId: 'c1' })).status).toBe(204);
  expect(await queue.getJob('c1')).toBeNull();
});

test("bull-board's job edits: data, delay and priority through the engine", async () => {
  await queue.add({ n: 1 }, { jobId: 'later', delayMs: 60_000 });
  await queue.add({ n: 2 }, { jobId: 'w1' });
  await queue.add({ n: 3 }, { jobId: 'w2' });
  const job = { queueName: 'billing', jobId: 'later' };
  expect((await call('patch', '/api/queues/:queueName/:jobId/update-data', job, {}, { jobData: { n: 10 } })).status).toBe(200);
  expect((await queue.getJob('later'))?.data).toEqual({ n: 10 });
  const runAt = Date.now() + 600_000;
  expect((await call('patch', '/api/queues/:queueName/:jobId/delay', job, {}, { runAt })).status).toBe(200);
  expect((await queue.getJob('later'))!.runAt).toBeGreaterThan(runAt - 5000); // bull-board sends a delay from its clock
  expect((await call('patch', '/api/queues/:queueName/:jobId/delay', { queueName: 'billing', jobId: 'w1' }, {}, { runAt })).status).toBe(400);
  expect((await call('patch', '/api/queues/:queueName/:jobId/priority', { queueName: 'billing', jobId: 'w2' }, {}, { priority: 5 })).status).toBe(200);
  expect((await queue.lease())[0]!.job.id).toBe('w2');
  // a leased job's data is its handler's: refused, nothing written
  const [held] = await queue.lease();
  await expect(call('patch', '/api/queues/:queueName/:jobId/update-data', { queueName: 'billing', jobId: held!.job.id }, {}, { jobData: { n: 0 } })).rejects.toThrow(JobLeasedError);
  expect((await queue.getJob(held!.job.id))?.data).toEqual({ n: 2 });
});

test('queue actions: pause and resume, retry every failed job, clean, empty', async () => {
  await dead('d1');
  await dead('d2');
  await complete('c1');
  await call('put', '/api/queues/:queueName/pause', { queueName: 'billing' });
  expect(await queue.isPaused()).toBe(true);
  await call('put', '/api/queues/:queueName/resume', { queueName: 'billing' });
  expect(await queue.isPaused()).toBe(false);

  expect((await call('put', '/api/queues/:queueName/retry/:queueStatus', { queueName: 'billing', queueStatus: 'failed' })).body).toEqual({ retried: 2, skipped: 0 });
  expect((await queue.counts()).pending).toBe(2);
  await call('put', '/api/queues/:queueName/clean/:queueStatus', { queueName: 'billing', queueStatus: 'completed' });
  // cleaned only past bull-board's 5 s grace: c1 finished just now and stays
  expect((await queue.getJob('c1'))?.state).toBe('completed');
  await call('put', '/api/queues/:queueName/empty', { queueName: 'billing' });
  expect((await queue.counts()).pending).toBe(0);
});

test("the global concurrency: bull-board's queue list reads it, its concurrency route sets it through the engine", async () => {
  const listed = async () => (await call('get', '/api/queues', {}, { activeQueue: 'billing', status: 'latest' })).body.queues[0].globalConcurrency;
  expect(await listed()).toBeNull();
  await call('put', '/api/queues/:queueName/concurrency', { queueName: 'billing' }, {}, { concurrency: 6 });
  expect(await queue.getGlobalConcurrency()).toBe(6);
  expect(await listed()).toBe(6);
  expect((await call('put', '/api/queues/:queueName/concurrency', { queueName: 'billing' }, {}, { concurrency: -2 })).status).toBe(400); // bull-board's own check
  expect(await queue.getGlobalConcurrency()).toBe(6);
});

test("Redis stats from the queue's connection; a failed INFO is a relq error naming the call", async () => {
  const res = await call('get', '/api/redis/stats');
  expect(res.body).toMatchObject({ backend: 'redis', version: expect.stringMatching(/^\d+\.\d+/), port: Number(new URL(redis.url).port) });
  const adapter = new RelqBullBoardAdapter(queue);
  await queue.close();
  const error = await adapter.getRedisInfo().catch((err: unknown) => err);
  expect(error).toBeInstanceOf(ConnectionError);
  expect((error as Error).message).toMatch(/^relq getRedisInfo: /);
});

test('obliterate while a job is leased: refused with 409 (bull-board names the active jobs), nothing deleted', async () => {
  await queue.add({ n: 2 }, { jobId: 'held' });
  const [lease] = await queue.lease({ count: 1 });
  expect(lease?.job.id).toBe('held');
  await call('put', '/api/queues/:queueName/pause', { queueName: 'billing' });
  const refused = await call('put', '/api/queues/:queueName/obliterate', { queueName: 'billing' });
  expect(refused.status).toBe(409);
  expect((await queue.getJob('held'))?.state).toBe('working'); // nothing deleted
});

test("the metrics tab: BullMQ's getMetrics from the queue's metrics history, newest minute first; empty without it", async () => {
  const empty = await call('get', '/api/queues/:queueName/metrics', { queueName: 'billing' });
  expect(empty.body).toEqual({ completed: { meta: { count: 0, prevTS: 0, prevCount: 0 }, data: [], count: 0 }, failed: { meta: { count: 0, prevTS: 0, prevCount: 0 }, data: [], count: 0 } });

  const kept = new Queue<{ n: number }, string>('ledger', { connection: redis.url, prefix: uniquePrefix(), metrics: { keepMinutes: 30 } });
  try {
    const adapter = new RelqBullBoardAdapter(kept);
    const own = new RouteCollector();
    createBullBoard({ queues: [adapter], serverAdapter: own, options: { validateResponses: true } });
    await kept.add({ n: 1 });
    await kept.add({ n: 2 });
    await kept.add({ n: 3 }, { attempts: 1 });
    const leases = await kept.lease({ count: 3 });
    await kept.ack(leases[0]!, 'paid');
    await kept.ack(leases[1]!, 'paid');
    await kept.nack(leases[2]!, { error: 'declined' });
    const r = own.routes.find((x) => [x.route].flat().includes('/api/queues/:queueName/metrics'))!;
    const res = await r.handler({ queues: own.queues, uiConfig: {}, params: { queueName: 'ledger' }, query: {}, body: {}, headers: {} });
    const { completed, failed } = res.body as { completed: { meta: { count: number; prevTS: number }; data: number[]; count: number }; failed: { meta: { count: number }; data: number[]; count: number } };
    // the 30 minutes kept and the current one; the settles in the newest (or, at a minute's turn, the one before)
    expect(completed.count).toBe(31);
    expect(completed.data).toHaveLength(31);
    expect(completed.meta.count).toBe(2);
    expect(completed.data.slice(0, 2).reduce((s, n) => s + n, 0)).toBe(2);
    expect(completed.meta.prevTS % 60_000).toBe(0);
    expect(failed.meta.count).toBe(1); // bull-board's failed: relq's dead
    expect(await adapter.getMetrics('completed', 0, 0)).toMatchObject({ data: [completed.data[0]], count: 31 });
  } finally {
    await kept.close();
  }
});
