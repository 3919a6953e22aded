/**
 * Connection loss: prompt typed errors, no password in any error text, and blocking
 * leases / workers that recover once the server is back.
 */
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { ConnectionError, Queue, Worker, type RelqWarning } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { Resources, blockedClients, eventsReady, sleep, waitUntil, within } from '../support/engine-harness.js';

const PASSWORD = 'Pw-7f3c9e-SECRET';

let current: TestRedis | undefined;
const res = new Resources(() => current!);
const servers: TestRedis[] = [];

async function server(opts: { password?: string } = {}): Promise<TestRedis> {
  const r = await startRedis({ controllable: true, ...opts });
  servers.push(r);
  current = r;
  return r;
}

afterEach(async () => {
  await res.closeAll();
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function errorOf(p: Promise<unknown>, ms = 8000): Promise<unknown> {
  try {
    await within(p, ms, 'call');
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** Every way an error can be printed, joined. */
function allText(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  const parts = [String(err), e?.message, e?.stack, inspect(err, { depth: 5 }), JSON.stringify(err)];
  if (e?.cause) parts.push(allText(e.cause));
  return parts.join('\n');
}

/** Retries `fn` until it succeeds (the client may still be reconnecting). */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(100);
    }
  }
}

describe('server down', () => {
  test('add / lease / getJob / counts reject with ConnectionError within a few seconds, and work again after a restart', async () => {
    const r = await server();
    const q = res.queue<string>();
    await q.add('before');
    await r.kill();
    const t = Date.now();
    const errs = await Promise.all([q.add('during'), q.lease(), q.getJob('x'), q.counts()].map((p) => errorOf(p)));
    expect(Date.now() - t).toBeLessThan(3000);
    for (const err of errs) {
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('RELQ_CONNECTION');
      expect((err as Error).message).toMatch(/relq \w+: cannot reach redis/);
    }
    await r.restart();
    const { created } = await eventually(() => q.add('after'));
    expect(created).toBe(true);
    expect((await q.lease())[0]!.job.data).toBe('after');
  });

  test('a Queue created while the server is down rejects promptly', async () => {
    const r = await server();
    await r.kill();
    const q = res.queue<string>();
    const t = Date.now();
    expect(await errorOf(q.add('x'))).toBeInstanceOf(ConnectionError);
    expect(Date.now() - t).toBeLessThan(3000);
  });

  test('while the server stays down, later calls also reject within a few seconds (not only the first)', async () => {
    const r = await server();
    const q = res.queue<string>();
    await q.add('before');
    await r.kill();
    expect(await errorOf(q.add('first'))).toBeInstanceOf(ConnectionError);
    const t = Date.now();
    const err = await errorOf(q.add('second'), 5000);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(Date.now() - t).toBeLessThan(5000);
  });
});

describe('closing while the server is down', () => {
  test('Queue.close() and Worker.close() resolve promptly', async () => {
    const r = await server();
    const q = res.queue<string>();
    const obs = res.client();
    const seen: string[] = [];
    const w = res.worker(new Worker<string>(q, async (job) => void seen.push(job.data), { blockMs: 500 }));
    await q.add('x');
    await waitUntil(() => seen.length === 1, 'job');
    const sub = q.events().subscribe({ error: () => undefined });
    await eventsReady(obs, q);
    await r.kill();
    await waitUntil(() => q.client.status !== 'ready', 'the queue to notice the server is gone', 10_000);
    const t = Date.now();
    await within(w.close(), 5000, 'Worker.close() with the server down');
    await within(q.close(), 5000, 'Queue.close() with the server down');
    sub.unsubscribe();
    expect(Date.now() - t).toBeLessThan(5000);
    expect(q.isClosed).toBe(true);
  });
});

describe('events() and connection loss', () => {
  test('a subscription made before an outage keeps delivering after the server restarts', async () => {
    const r = await server();
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const obs = res.client();
    const got: string[] = [];
    const sub = q.events().subscribe({ next: (e) => got.push(`${e.type}:${e.id ?? ''}`), error: () => undefined });
    try {
      await eventsReady(obs, q);
      await r.restart();
      // pub/sub is not durable: wait for the automatic re-subscription, then publish
      await eventually(() => eventsReady(obs, q));
      const { id } = await eventually(() => producer.add('after'));
      await waitUntil(() => got.includes(`added:${id}`), 'event after restart', 8000);
    } finally {
      sub.unsubscribe();
    }
  });

  test('subscribing while the server is down: no error, a warning that names the cause without the password', async () => {
    const r = await server({ password: PASSWORD });
    const warnings: RelqWarning[] = [];
    const q = res.track(
      new Queue('q', { connection: `redis://:${PASSWORD}@${r.host}:${r.port}`, prefix: uniquePrefix(), onWarning: (w) => warnings.push(w) }),
    );
    await r.kill();
    const errors: unknown[] = [];
    const sub = q.events().subscribe({ error: (e: unknown) => errors.push(e) });
    try {
      await waitUntil(() => warnings.some((w) => w.code === 'RELQ_EVENTS_RETRY'), 'the retry warning', 20_000);
    } finally {
      sub.unsubscribe();
    }
    expect(errors).toEqual([]);
    const text = warnings.map((w) => w.message).join('\n');
    expect(text).toMatch(/event stream cannot subscribe/);
    expect(text).not.toContain(PASSWORD);
  });
});

describe('passwords never appear in errors', () => {
  test('wrong password (URL and options): typed error, password not in message, stack, String(err) or inspect', async () => {
    const r = await server({ password: PASSWORD });
    const wrong = 'Wrong-9d1e-PASS';
    const viaUrl = res.track(new Queue('q', { connection: `redis://:${wrong}@${r.host}:${r.port}`, prefix: uniquePrefix() }));
    const viaOpts = res.track(new Queue('q', { connection: { host: r.host, port: r.port, password: wrong }, prefix: uniquePrefix() }));
    const viaUser = res.track(
      new Queue('q', { connection: `redis://default:${wrong}@${r.host}:${r.port}`, prefix: uniquePrefix() }),
    );
    for (const q of [viaUrl, viaOpts, viaUser]) {
      const err = await errorOf(q.add('x'));
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toMatch(/WRONGPASS|NOAUTH|auth/i);
      const text = allText(err);
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(PASSWORD);
    }
  });

  test('server down with the right password (URL, options, own client): password never printed', async () => {
    const r = await server({ password: PASSWORD });
    const own = new Redis({ host: r.host, port: r.port, password: PASSWORD, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    own.on('error', () => undefined);
    const queues = [
      res.track(new Queue('q', { connection: `redis://:${PASSWORD}@${r.host}:${r.port}`, prefix: uniquePrefix() })),
      res.track(new Queue('q', { connection: `redis://default:${PASSWORD}@${r.host}:${r.port}/0`, prefix: uniquePrefix() })),
      res.track(new Queue('q', { connection: { host: r.host, port: r.port, password: PASSWORD }, prefix: uniquePrefix() })),
      res.track(new Queue('q', { connection: own, prefix: uniquePrefix() })),
    ];
    try {
      for (const q of queues) expect((await q.add('ok')).created).toBe(true);
      const workerErrors: unknown[] = [];
      const w = res.worker(new Worker(queues[3]!, async () => undefined, { blockMs: 200 }));
      w.events.subscribe((e) => {
        if (e.type === 'error') workerErrors.push(e.error);
      });
      const obs = res.client();
      await waitUntil(async () => (await blockedClients(obs)) >= 1, 'the worker waiting on Redis', 10_000);
      await r.kill();
      // all at once, so they fail together at the client's first give-up point
      const calls = queues.flatMap((q) => [q.add('x'), q.lease({ blockMs: 100 }), q.sweep(), q.getJob('x')]);
      const errs = await Promise.all(calls.map((p) => errorOf(p)));
      for (const err of errs) {
        expect(err).toBeInstanceOf(ConnectionError);
        expect(allText(err)).not.toContain(PASSWORD);
      }
      await waitUntil(() => workerErrors.length > 0, 'a worker error event', 8000);
      for (const e of workerErrors) expect(allText(e)).not.toContain(PASSWORD);
    } finally {
      await res.closeAll();
      own.disconnect();
    }
  });
});

describe('recovery after a restart', () => {
  test('a connect attempt cut short by a disconnect that closes nothing does not end the connection', async () => {
    // What a Sentinel client's failover detector does when the new master is announced while
    // the client asks the Sentinels where to reconnect; here at the first connect.
    await server();
    const q = res.queue<string>();
    const client = q.client as Redis;
    expect(client.status).toBe('connecting');
    client.disconnect(true); // ioredis: disconnect and reconnect
    // (what was sent meanwhile fails, as with any lost connection)
    await waitUntil(() => client.status === 'ready', 'the connection to connect again', 5000);
    await q.add('after');
  });

  test('a Worker blocked on an empty queue processes a job added after the server restarts', async () => {
    const r = await server();
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const obs = res.client();
    const seen: string[] = [];
    res.worker(new Worker<string>(q, async (job) => void seen.push(job.data), { blockMs: 1000 }));
    await producer.add('before');
    await waitUntil(() => seen.length === 1, 'first job', 10_000);
    await waitUntil(async () => (await blockedClients(obs)) >= 1, 'the worker blocked on Redis', 10_000);
    await r.restart(); // data is gone, scripts are gone
    await eventually(() => producer.add('after'));
    await waitUntil(() => seen.includes('after'), 'job added after the restart', 10_000);
    expect(seen).toEqual(['before', 'after']);
  });

  test('a Worker survives a longer outage (server down for 1.5 s)', async () => {
    const r = await server();
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    const seen: string[] = [];
    const obs = res.client();
    res.worker(new Worker<string>(q, async (job) => void seen.push(job.data), { blockMs: 500 }));
    await waitUntil(async () => (await blockedClients(obs)) >= 1, 'the worker waiting on Redis', 10_000);
    await r.kill();
    await sleep(1500); // the outage
    await r.restart();
    await eventually(() => producer.add('after outage'));
    await waitUntil(() => seen.includes('after outage'), 'job after the outage', 10_000);
  });

  test('a blocking lease in progress during a restart returns the job added afterwards', async () => {
    const r = await server();
    const q = res.queue<string>();
    const producer = res.twin<string>(q);
    await q.counts();
    await producer.counts();
    const obs = res.client();
    const pending = q.lease({ blockMs: 8000 });
    pending.catch(() => undefined);
    await waitUntil(async () => (await blockedClients(obs)) === 1, 'the lease blocked on Redis', 10_000);
    await r.restart();
    await eventually(() => producer.add('after restart'));
    const leases = await within(pending, 10_000, 'blocking lease');
    expect(leases.map((l) => l.job.data)).toEqual(['after restart']);
  });

  test('an unresponsive server (SIGSTOP): a call fails with ConnectionError within a few seconds instead of hanging', async () => {
    const r = await server();
    const q = res.queue<string>();
    await q.add('x');
    r.pause();
    try {
      const t = Date.now();
      const err = await errorOf(q.add('y'), 9000);
      expect(err).toBeInstanceOf(ConnectionError);
      expect(Date.now() - t).toBeLessThan(8000); // the 5 s reply timeout, not a hang
    } finally {
      r.resume();
    }
  });
});
