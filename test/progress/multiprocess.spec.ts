/**
 * Progress and logs across processes: workers in child processes write them, this process
 * reads them (getJob, events); a worker killed mid-job leaves what it wrote, and the attempt
 * that takes the job over in another process adds to it.
 */
import { join } from 'node:path';
import { Queue } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { eventsReady } from '../core/_helpers.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'progress', 'fixtures', 'progress-worker.mjs');
const children = useEngineChildren();
let redis: TestRedis;
const queues: Queue<number, string>[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  await redis?.stop();
});

test('two worker processes write progress and lines that a third reads; a killed one leaves its lines to the next attempt', async () => {
  const prefix = uniquePrefix();
  const q = new Queue<number, string>('mp', { connection: redis.url, prefix });
  queues.push(q);
  const heard: string[] = [];
  const sub = q.events().subscribe((e) => {
    if (e.type === 'log') heard.push(e.line!);
  });
  const obs = redisClient(redis);
  try {
    await eventsReady(obs, q);
    const env = { REDIS_URL: redis.url, PREFIX: prefix, QUEUE: 'mp' };
    const hanging = children.fork(FIXTURE, { ...env, NAME: 'a', HANG_AT: 2 });
    await hanging.waitFor((m) => m.type === 'ready');
    const { id: first } = await q.add(0, { attempts: 3 });
    const { id: hung } = await hanging.waitFor((m) => m.type === 'hanging');
    expect(hung).toBe(first);
    await hanging.kill('SIGKILL');
    const steady = children.fork(FIXTURE, { ...env, NAME: 'b' });
    await steady.waitFor((m) => m.type === 'ready');
    const more = await q.addBulk([1, 2, 3].map((data) => ({ data })));
    // the killed lease runs out; a sweep gives the job to b, which resumes at step 3
    await waitUntil(
      async () => {
        await q.sweep();
        return (await q.counts()).completed === 4;
      },
      'every job completed',
      20_000,
    );
    const info = await q.getJob(first);
    expect(info).toMatchObject({ state: 'completed', result: 'b', progress: { step: 4, by: 'b' } });
    expect(info!.logs).toEqual(['a: step 1 of job 0', 'a: step 2 of job 0', 'b: step 3 of job 0', 'b: step 4 of job 0']);
    for (const { id } of more) {
      const job = await q.getJob(id);
      expect(job!.logs).toHaveLength(4);
      expect(job!.progress).toEqual({ step: 4, by: 'b' });
    }
    await waitUntil(() => heard.length === 4 + 12, 'every line heard');
  } finally {
    sub.unsubscribe();
    obs.disconnect();
  }
}, 60_000);
