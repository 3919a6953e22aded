/**
 * Per-job timeouts with worker processes: each process fails its own stuck attempts at the
 * timeout (its handlers never return) and keeps working; the retries complete.
 */
import { join } from 'node:path';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'timeouts', 'fixtures', 'worker.mjs');
const bed = useWorkerProcesses();

test('two worker processes: every first attempt times out, every retry completes, no slot stays taken', async () => {
  const { q, env } = bed.queue<number, string>('mp', { defaults: { timeoutMs: 300, attempts: 2, backoff: 0 } });
  const workers = [bed.fork(FIXTURE, { ...env, NAME: 'a' }), bed.fork(FIXTURE, { ...env, NAME: 'b' })];
  await Promise.all(workers.map((w) => w.waitFor((m) => m.type === 'ready')));
  // 8 jobs on 2 × 2 slots: without the timeout freeing the slots, four stuck handlers would stop both processes
  const added = await q.addBulk(Array.from({ length: 8 }, (_, data) => ({ data })));
  for (const { id } of added) expect(['a', 'b']).toContain(await q.waitForResult(id, { timeoutMs: 20_000 }));
  const timedOut = workers.flatMap((w) => w.messages.filter((m) => m.type === 'timedOut').map((m) => m.id as string));
  expect(new Set(timedOut)).toEqual(new Set(added.map((a) => a.id)));
  for (const { id } of added) expect(await q.getJob(id)).toMatchObject({ state: 'completed', failures: 1 });
  await waitUntil(async () => (await q.counts()).working === 0, 'no lease left');
}, 60_000);
