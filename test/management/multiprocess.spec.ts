/**
 * Job management while workers in other processes run: a forced remove makes the running
 * worker's outcome stale, promote and drain act on what those workers lease next.
 */
import { join } from 'node:path';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'management', 'fixtures', 'worker.mjs');
const bed = useWorkerProcesses();

test('two worker processes: a forced remove stales the running one, promoted jobs run, drain leaves them nothing', async () => {
  const { q, env } = bed.queue<{ ms?: number }, number>('mp');
  const workers = [bed.fork(FIXTURE, env), bed.fork(FIXTURE, env)];
  await Promise.all(workers.map((w) => w.waitFor((m) => m.type === 'ready')));
  const seen = (type: string) => workers.flatMap((w) => w.messages.filter((m) => m.type === type).map((m) => m.id as string));

  // a running job removed by force: its worker's ack is refused (reported as lost)
  const { id: long } = await q.add({ ms: 1500 });
  await waitUntil(() => seen('started').includes(long), 'a worker started the long job');
  await expect(q.remove(long)).rejects.toThrow(/leased/);
  expect(await q.remove(long, { force: true })).toBe(true);
  await waitUntil(() => seen('lost').includes(long), 'its outcome refused as stale', 10_000);
  expect(seen('completed')).not.toContain(long);
  expect(await q.getJob(long)).toBeNull();

  // delayed an hour: only the promoted ones run; drain removes the rest
  const delayed = await q.addBulk(Array.from({ length: 10 }, () => ({ data: {}, opts: { delayMs: 3_600_000 } })));
  const promoted = delayed.slice(0, 3).map((j) => j.id);
  for (const id of promoted) expect(await q.promote(id)).toBe(true);
  await waitUntil(() => promoted.every((id) => seen('completed').includes(id)), 'the promoted jobs done by the workers', 10_000);
  expect(await q.drain()).toBe(7);
  expect(await q.counts()).toMatchObject({ pending: 0, delayed: 0, working: 0 });
  const done = seen('completed');
  for (const { id } of delayed.slice(3)) expect(done).not.toContain(id);
}, 60_000);
