/**
 * queue.getWorkers() with workers in other processes: each is listed with its pid, host and
 * appName; one killed with SIGKILL drops off once its ttl ran out, found by the reader alone
 * (no sweep, no other worker); one that closes is gone at once.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'workers', 'fixtures', 'worker.mjs');
const bed = useWorkerProcesses();
const TTL_MS = 2000;

test('three worker processes are listed with their pids; a SIGKILLed one drops off after its ttl, a closed one at once', async () => {
  const { q, env } = bed.queue<string, string>('fleet');
  const children = [1, 2, 3].map((i) => bed.fork(FIXTURE, { ...env, APP_NAME: `app-${i}`, TTL_MS, CONCURRENCY: i }));
  const pids = (await Promise.all(children.map((c) => c.waitFor((m) => m.type === 'ready')))).map((m) => m.pid as number);
  await waitUntil(async () => (await q.getWorkers()).length === 3, 'the three workers listed', 10_000);
  const listed = await q.getWorkers();
  expect(listed.map((w) => w.pid).sort()).toEqual([...pids].sort());
  for (const [i, pid] of pids.entries()) {
    expect(listed.find((w) => w.pid === pid)).toMatchObject({ queue: 'fleet', host: hostname(), appName: `app-${i + 1}`, concurrency: i + 1, running: 0 });
  }
  for (const w of listed) expect(w.lastSeenAt).toBeGreaterThanOrEqual(w.startedAt);

  // SIGKILL: nobody tells Redis; the reader drops the entry once its ttl ran out
  const killedAt = Date.now();
  await children[0]!.kill('SIGKILL');
  expect((await q.getWorkers()).map((w) => w.pid)).toContain(pids[0]); // not before its ttl
  await waitUntil(async () => !(await q.getWorkers()).some((w) => w.pid === pids[0]), 'the killed worker gone', 10_000);
  expect(Date.now() - killedAt).toBeGreaterThanOrEqual(TTL_MS / 4); // an idle worker registers again by 7/10 of its ttl

  // close(): gone at once, without waiting for any ttl
  children[1]!.proc.send({ type: 'close' });
  await children[1]!.waitFor((m) => m.type === 'closed');
  expect((await q.getWorkers()).map((w) => w.pid)).toEqual([pids[2]]);
}, 60_000);
