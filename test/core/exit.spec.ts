/**
 * A process that closes what relq opened exits by itself at once: no timer of a connection
 * that is already gone keeps it alive (ioredis waits 2 s by default for the 'close' of a
 * socket it ends, which on such a socket came before). Each case runs in a child process
 * (test/core/fixtures/exit-child.mjs) that reports 'closed'; the time to its exit is measured.
 */
import { join } from 'node:path';
import type { EngineChild } from '../support/engine-child.js';
import { blockedPopIds, redisClient } from '../support/redis.js';
import { useWorkerProcesses } from '../support/worker-processes.js';
import { freePort } from '../../lib/testing/redis-ping.js';
import { waitUntil } from '../support/engine-harness.js';

const FIXTURE = join(process.cwd(), 'test', 'core', 'fixtures', 'exit-child.mjs');
const procs = useWorkerProcesses();

/** Ms from the child's 'closed' to its exit; fails unless it exits cleanly. */
async function exitAfterClosed(child: EngineChild): Promise<number> {
  await child.waitFor((m) => m === 'closed');
  const t0 = Date.now();
  expect(await child.exited).toEqual({ code: 0, signal: null });
  return Date.now() - t0;
}

test('a Queue closed while its connection waits to reconnect fails the call it queued at once, and its process exits at once', async () => {
  const child = procs.fork(FIXTURE, { MODE: 'away', PORT: await freePort() });
  const { add, settledMs } = await child.waitFor((m) => m.add !== undefined);
  expect(add).toBe('RELQ_CONNECTION');
  expect(settledMs).toBeLessThan(1000);
  expect(await exitAfterClosed(child)).toBeLessThan(1000);
});

test("a process exits at once after closing a worker whose blocking connection was killed (on a client passed in)", async () => {
  const { env } = procs.queue('killed');
  const obs = redisClient(procs.redis);
  try {
    const child = procs.fork(FIXTURE, { MODE: 'killed', ...env });
    await child.waitFor((m) => m === 'started');
    await waitUntil(async () => (await blockedPopIds(obs)).length === 1, 'the worker blocked');
    const [killed] = await blockedPopIds(obs);
    await obs.client('KILL', 'ID', killed!);
    await waitUntil(async () => {
      const ids = await blockedPopIds(obs);
      return ids.length === 1 && ids[0] !== killed;
    }, 'the worker blocked again, on a new connection');
    child.proc.send('close');
    expect(await exitAfterClosed(child)).toBeLessThan(1000);
  } finally {
    obs.disconnect();
  }
});
