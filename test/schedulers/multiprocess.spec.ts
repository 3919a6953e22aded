/**
 * Schedulers ticked by several processes at once (two children and this process): each
 * slot's job is added by exactly one of them. And across a Redis restart (AOF, fsync
 * always): the jobs and the schedulers' state survive, no slot is added twice, and the
 * slots missed while Redis was down follow the 'once' policy.
 */
import { join } from 'node:path';
import { Queue, SchedulerTicker } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { closeClient, redisNow, sleep, waitUntil } from '../support/engine-harness.js';
import { slotJobs } from './slot-jobs.js';

const FIXTURE = join(process.cwd(), 'test', 'schedulers', 'fixtures', 'ticker.mjs');
const children = useEngineChildren();
let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ controllable: true, appendfsync: 'always' });
});
afterAll(async () => {
  await redis?.stop();
});

test('three processes tick one queue: one job per slot, contiguous, each added once', async () => {
  const prefix = uniquePrefix();
  const q = new Queue('mp', { connection: redis.url, prefix });
  const obs = redisClient(redis);
  let mine = 0;
  const ticker = new SchedulerTicker(
    {
      runSchedulers: async () => {
        const r = await q.runSchedulers();
        mine += r.added;
        return r;
      },
    },
    { maxIntervalMs: 200 },
  );
  try {
    const env = { REDIS_URL: redis.url, PREFIX: prefix, QUEUE: 'mp' };
    const kids = [children.fork(FIXTURE, env), children.fork(FIXTURE, env)];
    await Promise.all(kids.map((k) => k.waitFor((m) => m.type === 'ready')));
    await q.upsertScheduler('fast', { everyMs: 100 });
    await q.upsertScheduler('sec', { cron: '* * * * * *' });
    ticker.start();
    // run until every ticker had its chance at many slots (Redis time, not this clock)
    await waitUntil(async () => (await slotJobs(obs, q, 'fast')).length >= 26 && (await slotJobs(obs, q, 'sec')).length >= 4, 'slots made', 20_000);
    const reports = await Promise.all(
      kids.map((k) => {
        k.proc.send({ type: 'stop' });
        return k.waitFor((m) => m.type === 'stopped');
      }),
    );
    await ticker.stop();
    const fast = await slotJobs(obs, q, 'fast');
    const sec = await slotJobs(obs, q, 'sec');
    fast.forEach((s, i) => expect(s).toBe(fast[0]! + i * 100));
    sec.forEach((s, i) => expect(s).toBe(sec[0]! + i * 1000));
    expect(fast.length).toBeGreaterThanOrEqual(25);
    expect(sec.length).toBeGreaterThanOrEqual(3);
    // every job after the two upserts' first ones was added by exactly one ticker
    const byTickers = mine + reports.reduce((a, r) => a + r.added, 0);
    expect(byTickers).toBe(fast.length + sec.length - 2);
    expect(reports.filter((r) => r.advanced > 0).length + (mine > 0 ? 1 : 0)).toBeGreaterThanOrEqual(2); // they did share the work
  } finally {
    await ticker.stop();
    await q.close();
    await closeClient(obs);
  }
}, 30_000);

test('across a Redis restart: state and jobs survive, no slot twice, missed slots run once', async () => {
  const prefix = uniquePrefix();
  const q = new Queue('restart', { connection: redis.url, prefix });
  const obs = redisClient(redis, { maxRetriesPerRequest: 1 });
  obs.on('error', () => undefined);
  const ticker = new SchedulerTicker(q, { maxIntervalMs: 100 });
  try {
    await q.upsertScheduler('r', { everyMs: 200 });
    ticker.start();
    await waitUntil(async () => (await slotJobs(obs, q, 'r')).length >= 4, '4 slots', 10_000);
    await ticker.stop();
    const before = await slotJobs(obs, q, 'r');
    const [{ nextRunAt, made }] = await q.getSchedulers();
    await redis.kill();
    await sleep(1200); // the queued slot and about five more pass while Redis is down
    await redis.restart();
    await waitUntil(async () => (await obs.ping().catch(() => '')) === 'PONG', 'Redis back', 10_000);
    expect(await slotJobs(obs, q, 'r')).toEqual(before); // every job made before is still there
    expect(await q.getSchedulers()).toMatchObject([{ nextRunAt, made }]);
    const now = await redisNow(obs);
    ticker.start();
    await waitUntil(async () => (await slotJobs(obs, q, 'r')).length >= before.length + 4, 'ticking again', 10_000);
    await ticker.stop();
    const after = await slotJobs(obs, q, 'r');
    expect(new Set(after).size).toBe(after.length);
    expect(after.slice(0, before.length)).toEqual(before);
    // one catch-up job for the slots missed while down, then contiguous slots again
    const catchUp = after[before.length]!;
    expect(catchUp - before[before.length - 1]!).toBeGreaterThan(200);
    expect(catchUp).toBeLessThanOrEqual(now + 200);
    after.slice(before.length).forEach((s, i) => expect(s).toBe(catchUp + i * 200));
  } finally {
    await ticker.stop();
    await q.close();
    await closeClient(obs);
  }
}, 30_000);
