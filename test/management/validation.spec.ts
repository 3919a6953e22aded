/**
 * Bad arguments to the job-management calls: a ValidationError naming the field, before any
 * script runs, and the queue's keys exactly as they were.
 */
import type { Redis } from 'ioredis';
import { Queue, ValidationError } from '../../lib/index.js';
import { commandStats, queueKeysIn, scriptCalls, statsDelta, useRedis } from '../support/engine-harness.js';
import { keyContent } from '../support/key-read.js';

const res = useRedis();

/** Every key of the queue with its serialized value. */
async function snapshot(c: Redis, q: Queue<any, any>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of await queueKeysIn(c, q)) out[k] = await keyContent(c, k);
  return out;
}

let q: Queue<string>;
let obs: Redis;
beforeEach(async () => {
  q = res.queue<string>();
  obs = res.client();
  // one job in every state
  await q.add('done', { jobId: 'done' });
  await q.ack((await q.lease())[0]!);
  await q.add('dead', { jobId: 'dead', attempts: 1 });
  await q.nack((await q.lease())[0]!, { error: 'x' });
  await q.add('leased', { jobId: 'leased' });
  await q.lease();
  await q.add('delayed', { jobId: 'delayed', delayMs: 60_000 });
  await q.add('pending', { jobId: 'pending', group: 'g' });
});

const cases: Array<[string, string, () => Promise<unknown>]> = [
  ['getJobs: unknown state', 'state', () => q.getJobs('running' as never)],
  ['getJobs: negative start', 'start', () => q.getJobs('pending', { start: -1 })],
  ['getJobs: end before start', 'end', () => q.getJobs('pending', { start: 5, end: 4 })],
  ['getJobs: a page over 10 000', 'end', () => q.getJobs('pending', { start: 0, end: 10_000 })],
  ['getJobs: unknown order', 'order', () => q.getJobs('pending', { order: 'up' as never })],
  ['getJobs: unknown option', 'getJobs options', () => q.getJobs('pending', { limit: 3 } as never)],
  ['getJobs: no states', 'states', () => q.getJobs([])],
  ['getJobs: an unknown state among several', 'states[1]', () => q.getJobs(['pending', 'waiting' as never])],
  ['getJobs: a state twice', 'states[2]', () => q.getJobs(['pending', 'delayed', 'pending'])],
  ['getCountsPerPriority: not an array', 'priorities', () => q.getCountsPerPriority(5 as never)],
  ['getCountsPerPriority: out of range', 'priorities[1]', () => q.getCountsPerPriority([0, 1001])],
  ['getCountsPerPriority: not whole', 'priorities[0]', () => q.getCountsPerPriority([0.5])],
  ['clearLogs: empty id', 'id', () => q.clearLogs('')],
  ['clearLogs: negative keep', 'keep', () => q.clearLogs('leased', { keep: -1 })],
  ['clearLogs: unknown option', 'clearLogs options', () => q.clearLogs('leased', { all: true } as never)],
  ['add: keepLogs 0', 'opts.keepLogs', () => q.add('x', { keepLogs: 0 })],
  ['addBulk: keepLogs over 100 000', 'jobs[0].opts.keepLogs', () => q.addBulk([{ data: 'x', opts: { keepLogs: 100_001 } }])],
  ['remove: empty id', 'id', () => q.remove('')],
  ['remove: force not a boolean', 'force', () => q.remove('leased', { force: 'yes' as never })],
  ['remove: unknown option', 'remove options', () => q.remove('leased', { hard: true } as never)],
  ['promote: not a string', 'id', () => q.promote(5 as never)],
  ['changePriority: out of range', 'priority', () => q.changePriority('pending', 1001)],
  ['changePriority: not whole', 'priority', () => q.changePriority('delayed', 1.5)],
  ['changePriority: a grouped job (known in Redis)', 'priority', () => q.changePriority('pending', 2)],
  ['clean: a waiting state', 'state', () => q.clean('pending' as never)],
  ['clean: negative olderThanMs', 'olderThanMs', () => q.clean('completed', { olderThanMs: -1 })],
  ['clean: limit 0', 'limit', () => q.clean('dead', { limit: 0 })],
  ['clean: limit over 10 000', 'limit', () => q.clean('completed', { limit: 10_001 })],
  ['clean: unknown option', 'clean options', () => q.clean('completed', { before: 1 } as never)],
  ['retryDead: no limit', 'limit', () => q.retryDead({ name: 'x' } as never)],
  ['retryDead: name not a string', 'name', () => q.retryDead({ limit: 5, name: 5 as never })],
  ['retryDead: negative olderThanMs', 'olderThanMs', () => q.retryDead({ limit: 5, olderThanMs: -5 })],
  ['purgeDead: unknown option', 'purgeDead filter', () => q.purgeDead({ limit: 5, state: 'dead' } as never)],
  ['add: lifo not a boolean', 'opts.lifo', () => q.add('x', { lifo: 1 as never })],
  ['add: lifo with a delay', 'opts', () => q.add('x', { lifo: true, delayMs: 100 })],
  ['addBulk: lifo with runAt', 'jobs[0].opts', () => q.addBulk([{ data: 'x', opts: { lifo: true, runAt: Date.now() + 1000 } }])],
];

test.each(cases)('%s: ValidationError for %s, nothing written', async (_what, field, call) => {
  const before = await snapshot(obs, q);
  const stats = await commandStats(obs);
  const err = await call().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).field).toBe(field);
  expect(await snapshot(obs, q)).toEqual(before);
  // checked before any script ran, except what only Redis knows (a job's group)
  if (!_what.includes('known in Redis')) expect(scriptCalls(statsDelta(stats, await commandStats(obs)))).toBe(0);
});
