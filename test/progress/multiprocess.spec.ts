/**
 * Progress and logs across processes: workers in child processes write them, this process
 * reads them (getJob, events); a worker killed mid-job leaves what it wrote, and the attempt
 * that takes the job over in another process adds to it.
 */
import { join } from 'node:path';
import { redisClient } from '../support/redis.js';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { eventsReady } from '../support/engine-harness.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'progress', 'fixtures', 'progress-worker.mjs');
const bed = useWorkerProcesses();

test('two worker processes write progress and lines that a third reads; a killed one leaves its lines to the next attempt', async () => {
  const { q, env } = bed.queue<number, string>('mp');
  const heard: string[] = [];
  const sub = q.events().subscribe((e) => {
    if (e.type === 'log') heard.push(e.line!);
  });
  const obs = redisClient(bed.redis);
  try {
    await eventsReady(obs, q);
    const hanging = bed.fork(FIXTURE, { ...env, NAME: 'a', HANG_AT: 2 });
    await hanging.waitFor((m) => m.type === 'ready');
    const { id: first } = await q.add(0, { attempts: 3 });
    const { id: hung } = await hanging.waitFor((m) => m.type === 'hanging');
    expect(hung).toBe(first);
    await hanging.kill('SIGKILL');
    const steady = bed.fork(FIXTURE, { ...env, NAME: 'b' });
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
