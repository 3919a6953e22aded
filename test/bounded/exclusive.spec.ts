/**
 * Exclusive producer / consumer roles: a second holder gets QueueInUseError naming the
 * holder (host, pid, instance) or waits its turn; a crashed holder's role is recovered after
 * its ttl (unlike pressure, where a crashed holder deadlocks the queue).
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { QueueInUseError, Worker } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { uniquePrefix } from '../support/redis.js';
import { useRedis, blockedClients, waitUntil, within } from '../support/engine-harness.js';

const FIXTURE = join(process.cwd(), 'test', 'bounded', 'fixtures', 'role-child.mjs');
const kids = useEngineChildren();
const res = useRedis();

test('a second producer gets QueueInUseError naming the holder; after close() the role is free', async () => {
  const a = res.queue('x1', { exclusive: { producer: true } });
  const b = res.twin(a, { exclusive: { producer: true } });
  await a.add(1);
  const err = await b.add(2).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QueueInUseError);
  expect(err).toMatchObject({ code: 'RELQ_QUEUE_IN_USE', role: 'producer', holder: { host: hostname(), pid: process.pid, instance: a.identity.instance } });
  expect((err as Error).message).toContain(a.identity.instance);
  await a.add(3); // the holder goes on
  await a.close();
  expect((await b.add(4)).created).toBe(true);
  await expect(res.twin(b, { exclusive: { producer: true } }).add(5)).rejects.toBeInstanceOf(QueueInUseError);
  expect((await b.counts()).pending).toBe(3);
});

test('waitMs: the second producer waits its turn and gets the role when the first releases it', async () => {
  const a = res.queue('x2', { exclusive: { producer: true } });
  const b = res.twin(a, { exclusive: { producer: true, waitMs: 15_000 } });
  const obs = res.client();
  await a.add(1);
  let done = false;
  const waiting = b.add(2).then(() => (done = true));
  await waitUntil(async () => (await blockedClients(obs)) === 1, 'the second producer waiting for the role', 10_000);
  expect(done).toBe(false);
  const releasedAt = Date.now();
  await a.close();
  await within(waiting, 10_000, 'waiting producer');
  // woken by the release, not when its wait runs out (the holder's key has ~7-10 s left)
  expect(Date.now() - releasedAt).toBeLessThan(5000);
});

test('exclusive consumer: a second Worker reports QueueInUseError and takes over when the first closes', async () => {
  const q = res.queue<number>('x3');
  const first: number[] = [];
  const second: number[] = [];
  const errors: unknown[] = [];
  const w1 = res.worker(new Worker(res.twin<number>(q, { exclusive: { consumer: true } }), async (j) => void first.push(j.data), { blockMs: 200 }));
  await q.add(1);
  await waitUntil(() => first.length === 1, 'first worker got the job');
  const w2 = res.worker(new Worker(res.twin<number>(q, { exclusive: { consumer: true } }), async (j) => void second.push(j.data), { blockMs: 200 }));
  w2.events.subscribe((e) => e.type === 'error' && errors.push(e.error));
  await waitUntil(() => errors.length > 0, 'second worker refused');
  expect(errors[0]).toBeInstanceOf(QueueInUseError);
  await q.add(2);
  await waitUntil(() => first.length === 2, 'first worker keeps consuming');
  await w1.close();
  await w1.queue.close(); // releases the role
  await q.add(3);
  await waitUntil(() => second.includes(3), 'second worker took over', 10_000);
  expect(second).toEqual([3]);
  await w2.close();
});

test('a SIGKILLed holder: its roles are recovered after their ttl', async () => {
  const prefix = uniquePrefix();
  const child = kids.fork(FIXTURE, { REDIS_URL: res.server.url, PREFIX: prefix, NAME: 'x4', TTL_MS: 600 });
  const { identity } = await child.waitFor((m) => m.type === 'holding');
  const q = res.queue('x4', { prefix, exclusive: { producer: true, consumer: true, ttlMs: 600 } });
  const err = await q.add(1).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QueueInUseError);
  expect((err as QueueInUseError).holder).toEqual(identity);
  expect((err as QueueInUseError).holder!.pid).toBe(child.proc.pid);
  await child.kill('SIGKILL');
  const killedAt = Date.now();
  // with waitMs, the survivor blocks until the dead holder's key expires (no release comes)
  const late = res.twin(q, { exclusive: { producer: true, consumer: true, ttlMs: 600, waitMs: 15_000 } });
  await within(late.add(2), 15_000, 'add after the holder died');
  expect(Date.now() - killedAt).toBeLessThan(5000); // after the 600 ms ttl, not at the end of the 15 s wait
  await late.lease();
});
