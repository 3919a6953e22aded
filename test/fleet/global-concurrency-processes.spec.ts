/**
 * The queue-wide concurrency across processes: three worker processes of 4 slots each share
 * a limit that is raised, lowered and removed while they run. Each handler reports when it
 * ran; the test counts how many ran at once, fleet-wide, and that every process took part.
 */
import { join } from 'node:path';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { waitUntil } from '../support/wait.js';
import { mostAtOnce, overlapping, type Run } from './overlap.js';

const FIXTURE = join(process.cwd(), 'test', 'fleet', 'fixtures', 'limited-worker.mjs');
const bed = useWorkerProcesses();

test('three processes hold the queue-wide limit while it is raised, lowered and removed', async () => {
  const { q, env } = bed.queue<{ ms: number }, void>('fleet');
  await q.setGlobalConcurrency(2); // the workers' Queue objects have no option of it
  expect(await q.getGlobalConcurrency()).toBe(2);
  const kids = [0, 1, 2].map((i) => bed.fork(FIXTURE, { ...env, CONCURRENCY: 4, TAG: `w${i}` }));
  await Promise.all(kids.map((k) => k.waitFor((m) => m.type === 'ready')));
  const runs = (): Run[] => kids.flatMap((k) => k.messages.filter((m) => m.type === 'ran') as Run[]);

  // limit 2
  await q.addBulk(Array.from({ length: 30 }, () => ({ data: { ms: 100 } })));
  await waitUntil(() => runs().length >= 8, '8 jobs at limit 2', 30_000);
  const raisedAt = Date.now();
  await q.setGlobalConcurrency(6);
  const raised = Date.now();
  await waitUntil(() => runs().length >= 20, '20 jobs', 30_000);
  const loweredAt = Date.now();
  await q.setGlobalConcurrency(1);
  const lowered = Date.now();
  await q.addBulk(Array.from({ length: 8 }, () => ({ data: { ms: 100 } })));
  await waitUntil(() => runs().length >= 38, '38 jobs', 30_000);

  const all = runs();
  // Before the raise every running job was leased under the limit of 2, and it was reached.
  expect(mostAtOnce(all, -Infinity, raisedAt)).toBe(2);
  // Between the raise and the lowering: above 2, never above 6.
  const middle = mostAtOnce(all, raised, loweredAt);
  expect(middle).toBeGreaterThan(2);
  expect(middle).toBeLessThanOrEqual(6);
  // A job leased under the limit of 1 ran alone: nothing overlaps it (leases held above a
  // lowered limit run to their end, so jobs that started just after the call are left out).
  const late = all.filter((r) => r.start > lowered + 300);
  expect(late.length).toBeGreaterThanOrEqual(5);
  for (const r of late) expect(overlapping(all, r)).toEqual([]);

  // Removed: the fleet's 12 slots, each process its share.
  await q.setGlobalConcurrency(0);
  expect(await q.getGlobalConcurrency()).toBe(0);
  const removedAt = Date.now();
  await q.addBulk(Array.from({ length: 36 }, () => ({ data: { ms: 400 } })));
  await waitUntil(() => runs().length >= 74, '74 jobs', 30_000);
  const free = runs().filter((r) => r.start > removedAt);
  expect(mostAtOnce(free)).toBeGreaterThan(8); // more than two processes' slots at once
  for (const tag of ['w0', 'w1', 'w2']) expect(free.filter((r) => r.tag === tag).length).toBeGreaterThan(0);
  expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: 74 });

  for (const k of kids) k.proc.send({ type: 'close' });
  await Promise.all(kids.map((k) => k.exited));
}, 90_000);
