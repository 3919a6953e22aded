/**
 * Connections and lifecycle: close() closes exactly what relq opened, a client passed
 * in stays open, calls after close fail with ClosedError, nothing leaks.
 */
import type { Redis } from 'ioredis';
import { ClosedError, Queue, Worker } from '../../lib/index.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { useRedis, blockedClients, closeClient, eventsReady, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();

async function clientCount(obs: Redis): Promise<number> {
  const list = (await obs.client('LIST')) as string;
  return list.split('\n').filter((l) => l.trim() && !/ cmd=monitor/.test(l)).length;
}

/** Opens every kind of connection relq uses: command, blocker (lease + worker), subscriber. */
async function useEverything(q: Queue<string, string>): Promise<Worker<string, string>> {
  await q.add('a');
  await q.lease({ blockMs: 50 });
  const sub = q.events().subscribe();
  const w = new Worker<string, string>(q, async () => 'ok', { blockMs: 200 });
  await q.add('b');
  await q.waitForResult((await q.add('c')).id, { timeoutMs: 10_000 });
  sub.unsubscribe();
  return w;
}

describe('close()', () => {
  test('closes every connection relq opened (command, blockers, subscriber)', async () => {
    const obs = res.client();
    await obs.ping();
    const baseline = await clientCount(obs);
    const q = new Queue<string, string>('q', { connection: res.server.url, prefix: uniquePrefix() });
    const w = await useEverything(q);
    expect(await clientCount(obs)).toBeGreaterThan(baseline + 1);
    await w.close();
    await q.close();
    await waitUntil(async () => (await clientCount(obs)) === baseline, 'all relq connections closed', 10_000);
  });

  test('a client passed in is never closed; only the duplicates relq made are', async () => {
    const obs = res.client();
    const own = redisClient(res.server);
    own.on('error', () => undefined);
    try {
      await own.ping();
      await obs.ping();
      const baseline = await clientCount(obs);
      const q = new Queue<string, string>('q', { connection: own, prefix: uniquePrefix() });
      const w = await useEverything(q);
      await w.close();
      await q.close();
      expect(own.status).toBe('ready');
      expect(await own.ping()).toBe('PONG');
      await waitUntil(async () => (await clientCount(obs)) === baseline, 'relq duplicates closed', 10_000);
      // the same client can serve a new queue afterwards
      const again = res.track(new Queue<string>('q2', { connection: own, prefix: uniquePrefix() }));
      expect((await again.add('x')).created).toBe(true);
    } finally {
      await res.closeAll();
      await closeClient(own);
    }
  });

  test('is idempotent', async () => {
    const q = res.queue();
    await q.add(1);
    await q.close();
    await q.close();
    expect(q.isClosed).toBe(true);
  });

  test('calls after close reject with ClosedError and send nothing', async () => {
    const q = res.queue<string>();
    await q.add('x');
    const [l] = await q.lease();
    await q.close();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['add', () => q.add('y')],
      ['addBulk', () => q.addBulk([{ data: 'y' }])],
      ['lease', () => q.lease()],
      ['ack', () => q.ack(l!)],
      ['nack', () => q.nack(l!)],
      ['touch', () => q.touch(l!)],
      ['getJob', () => q.getJob('x')],
      ['counts', () => q.counts()],
      ['sweep', () => q.sweep()],
      ['pause', () => q.pause()],
    ];
    for (const [name, call] of calls) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect([name, err instanceof ClosedError]).toEqual([name, true]);
      expect((err as ClosedError).code).toBe('RELQ_CLOSED');
    }
  });

  test('a lease blocked at close() settles at once, with [] or ClosedError', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    await q.counts();
    const pending = q.lease({ blockMs: 10_000 }).then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    );
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the lease blocked on Redis', 10_000);
    const t = Date.now();
    await q.close();
    const out = await within(pending, 8000, 'blocked lease after close');
    expect(Date.now() - t).toBeLessThan(5000); // not the 10 s block
    if ('e' in out) expect(out.e).toBeInstanceOf(ClosedError);
    else expect(out.v).toEqual([]);
  });

  test('waitForResult in progress at close() rejects at once with ClosedError (not at its timeout)', async () => {
    const q = res.queue<string>();
    const { id } = await q.add('x');
    const obs = res.client();
    const p = q.waitForResult(id, { timeoutMs: 15_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await eventsReady(obs, q);
    const t = Date.now();
    await q.close();
    const err = await p; // settles by itself at the latest after timeoutMs, so nothing is left running
    expect(Date.now() - t).toBeLessThan(5000); // not the 15 s timeout
    expect(err).toBeInstanceOf(ClosedError);
  });
});
