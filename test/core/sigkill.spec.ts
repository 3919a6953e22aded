/**
 * A separate Node process leases a job through the real engine and is killed with
 * SIGKILL. After its lease expires, sweep() returns the job and another worker
 * completes it with attempt 2.
 *
 * The child cannot load TypeScript itself, so beforeAll transpiles the engine with
 * test/support/engine-child.ts into .tmp/ (git-ignored), where Node still finds node_modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from '../../lib/index.js';
import { buildEngine, type BuiltEngine } from '../support/engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { Resources, redisNow, waitUntil } from '../support/engine-harness.js';

const ROOT = process.cwd();
const FIXTURE = join(ROOT, 'test', 'core', 'fixtures', 'sigkill-child.mjs');

let redis: TestRedis;
let engine: BuiltEngine;
let child: ChildProcess | undefined;
const res = new Resources(() => redis);

beforeAll(async () => {
  redis = await startRedis();
  engine = buildEngine();
});
afterEach(() => res.closeAll());
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  engine?.remove();
  await redis?.stop();
});

/** Starts the child; resolves with the leases it printed. */
function leaseInChild(url: string, prefix: string, name: string, leaseMs: number) {
  return new Promise<Array<{ id: string; token: string; deadline: number; attempt: number }>>((resolve, reject) => {
    const c = spawn(process.execPath, [FIXTURE, engine.dir, url, prefix, name, String(leaseMs)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`child printed nothing within 10 s; stderr: ${err}`)), 10_000);
    c.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, nl)));
      }
    });
    c.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    c.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`child exited early (code ${code}, signal ${sig}); stderr: ${err}`));
    });
  });
}

test('a child process holding a lease is SIGKILLed; after expiry sweep returns the job and another worker completes it with attempt 2', async () => {
  const prefix = uniquePrefix();
  const q = res.queue<string, string>('crash', { prefix });
  const obs = res.client();
  const { id } = await q.add('survive me', { attempts: 3 });

  // Long enough that the checks below surely run before it ends, even on a loaded machine.
  const leases = await leaseInChild(redis.url, prefix, 'crash', 3000);
  expect(leases).toHaveLength(1);
  expect(leases[0]).toMatchObject({ id, attempt: 1 });
  expect(await q.getJob(id)).toMatchObject({ state: 'working', leaseDeadline: leases[0]!.deadline });

  const c = child!;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => c.once('exit', (_code, sig) => resolve(sig)));
  c.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  // still held by the dead process until the lease runs out
  expect((await q.sweep()).stalled).toBe(0);
  expect(await q.lease()).toEqual([]);
  await waitUntil(async () => (await redisNow(obs)) > leases[0]!.deadline, 'the dead holder\'s lease deadline (Redis time)', 10_000);
  expect((await q.sweep()).stalled).toBe(1);
  expect(await q.getJob(id)).toMatchObject({ state: 'pending', failures: 1, lastError: 'lease expired' });

  const seen: number[] = [];
  res.worker(
    new Worker<string, string>(
      q,
      async (job) => {
        seen.push(job.attempt);
        return `done on attempt ${job.attempt}`;
      },
      { blockMs: 1000 },
    ),
  );
  await waitUntil(async () => (await q.getJob(id))?.state === 'completed', 'completion', 10_000);
  expect(seen).toEqual([2]);
  expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: 'done on attempt 2', failures: 1 });
  // the killed holder's token is dead for good
  const ghost = { job: { id, policy: { keepCompletedMs: 60_000, dedupWindowMs: 0 } }, token: leases[0]!.token, deadline: 0 };
  expect(await q.ack(ghost as never, 'from the grave')).toBe(false);
  expect((await q.getJob(id))!.result).toBe('done on attempt 2');
});
