/**
 * A step job survives a crash between its steps: a worker process killed (SIGKILL) in step 2
 * leaves the data its step 1 saved, and the worker that takes the job over runs step 2 again
 * from it, never step 1.
 */
import { join } from 'node:path';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'steps', 'fixtures', 'step-worker.mjs');
const bed = useWorkerProcesses();

test('a worker killed in step 2: the next one reruns step 2 from the saved data, not step 1', async () => {
  const { q, env } = bed.queue<{ step: number }, Record<string, unknown>>('steps');
  const a = bed.fork(FIXTURE, { ...env, NAME: 'a', HANG_AT: 2 });
  await a.waitFor((m) => m.type === 'ready');
  const { id } = await q.add({ step: 1 }, { attempts: 3 });
  await a.waitFor((m) => m.type === 'step' && m.step === 2);
  expect(await q.getJob(id)).toMatchObject({ state: 'working', data: { step: 2, step1: 'a' }, failures: 0 });
  await a.kill('SIGKILL');

  const b = bed.fork(FIXTURE, { ...env, NAME: 'b' });
  await b.waitFor((m) => m.type === 'ready');
  // the killed lease runs out; a sweep returns the job (a failed attempt: its worker died)
  await waitUntil(
    async () => {
      await q.sweep();
      return (await q.getJob(id))?.state === 'completed';
    },
    'the job completed by b',
    20_000,
  );
  // its messages come through IPC, which may be read after the Redis reply that showed the job completed
  await b.waitFor((m) => m.type === 'step' && m.step === 3);
  const steps = (c: typeof a) => c.messages.filter((m) => m.type === 'step').map((m) => [m.step, m.attempt]);
  expect(steps(a)).toEqual([
    [1, 1],
    [2, 1],
  ]);
  expect(steps(b)).toEqual([
    [2, 2],
    [3, 2],
  ]);
  expect(await q.getJob(id)).toMatchObject({
    state: 'completed',
    failures: 1,
    requeues: 2,
    result: { step: 3, step1: 'a', step2: 'b', step3: 'b' },
  });
}, 60_000);
