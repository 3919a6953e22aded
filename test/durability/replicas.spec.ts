/**
 * `durability: { replicas, timeoutMs }` on a master + replica pair: adds and settles wait
 * (WAIT) until the replica has them; when it does not confirm in time the call throws
 * NotReplicatedError carrying what the call returned, and the write stays applied.
 */
import { Redis } from 'ioredis';
import { NotReplicatedError, Queue, ValidationError, Worker, type WorkerEvent } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const until = (cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) => waitUntil(cond, what, timeoutMs, 20);

let master: TestRedis;
let replica: TestRedis;
let onReplica: Redis;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  master = await startRedis({ controllable: true });
  replica = await startRedis({ extraArgs: ['--replicaof', master.host, String(master.port)] });
  onReplica = new Redis(replica.url);
  await until(async () => /master_link_status:up/.test(await onReplica.info('replication')), 'the replica to sync');
});
afterEach(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
  replica.resume(); // in case a test failed while it was stopped
});
afterAll(async () => {
  onReplica?.disconnect();
  await Promise.all([replica?.stop(), master?.stop()]);
});

function queue(opts: ConstructorParameters<typeof Queue>[1] = {}): Queue<string, string> {
  const q = new Queue<string, string>('durable', { connection: master.url, prefix: uniquePrefix(), ...opts });
  closers.push(() => q.close());
  return q;
}

const durability = { replicas: 1, timeoutMs: 300 };

test('with the replica up: every add and ack returned only once the replica had it', async () => {
  const q = queue({ durability });
  for (let i = 0; i < 20; i++) {
    const { id } = await q.add(`job ${i}`);
    // read from the replica right away: WAIT made sure it is there
    expect(await onReplica.hexists(q.keys.byName.jobs, id)).toBe(1);
  }
  const leases = await q.lease({ count: 20 });
  for (const l of leases) {
    expect(await q.ack(l, 'ok')).toBe(true);
    expect(await onReplica.zscore(q.keys.byName.done, l.job.id)).not.toBeNull();
  }
});

test('with the replica stopped: NotReplicatedError carries the result, and the write is applied on the master', async () => {
  const q = queue({ durability });
  await q.add('warm-up'); // connected and checked while the replica answers
  const [warm] = await q.lease();
  replica.pause();
  const addErr = (await q.add('x', { jobId: 'not-replicated' }).catch((e: unknown) => e)) as NotReplicatedError;
  expect(addErr).toBeInstanceOf(NotReplicatedError);
  expect(addErr).toMatchObject({ code: 'RELQ_NOT_REPLICATED', op: 'add', replicas: 0, required: 1, result: { id: 'not-replicated', created: true } });
  expect(addErr.message).toMatch(/applied on the master, but only 0 of 1 replica/);
  expect(await q.getJob('not-replicated')).toMatchObject({ state: 'pending' });

  const ackErr = (await q.ack(warm!, 'done').catch((e: unknown) => e)) as NotReplicatedError;
  expect(ackErr).toBeInstanceOf(NotReplicatedError);
  expect(ackErr.result).toBe(true);
  expect(await q.getJob(warm!.job.id)).toMatchObject({ state: 'completed', result: 'done' });

  const bulkErr = (await q.addBulk([{ data: 'a' }, { data: 'b' }]).catch((e: unknown) => e)) as NotReplicatedError;
  expect(bulkErr.result).toEqual([expect.objectContaining({ created: true }), expect.objectContaining({ created: true })]);
  replica.resume();
  await until(async () => (await onReplica.hexists(q.keys.byName.jobs, 'not-replicated')) === 1, 'the replica to catch up');
});

test('a Worker keeps processing while the replica lags and reports each shortfall as an error event', async () => {
  const q = queue({ durability });
  await q.add('warm-up');
  replica.pause();
  const events: Array<WorkerEvent<string, string>> = [];
  const w = new Worker(q, async (job) => `done ${job.data}`, { concurrency: 2, blockMs: 200 });
  closers.push(() => w.close({ drainTimeoutMs: 0 }));
  w.events.subscribe((e) => events.push(e));
  await until(() => events.some((e) => e.type === 'completed'), 'the warm-up job to complete');
  expect(events.some((e) => e.type === 'error' && e.error instanceof NotReplicatedError)).toBe(true);
  expect(events.some((e) => e.type === 'lost')).toBe(false);
  replica.resume();
  await q.add('after');
  await until(async () => (await q.counts()).completed === 2, 'both completed');
});

test('bad durability options are refused before anything connects', () => {
  expect(() => queue({ durability: { replicas: 0, timeoutMs: 100 } })).toThrow(ValidationError);
  expect(() => queue({ durability: { replicas: 1, timeoutMs: 5000 } })).toThrow(/below the connection's commandTimeout \(5000 ms\)/);
  expect(() => queue({ durability: { replicas: 1 } as never })).toThrow(/durability.timeoutMs/);
});
