/**
 * Redis states that end by themselves are retryable ConnectionErrors, told apart from bad
 * requests: LOADING after a restart, READONLY from a replica. (CLUSTERDOWN is in
 * test/cluster/failover.spec.ts, the TLS and auth failures in test/security.)
 */
import { Redis } from 'ioredis';
import { ConnectionError, Queue, ValidationError } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

const servers: TestRedis[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
  await Promise.all(servers.map((s) => s.stop()));
});

test('LOADING while a restarted server reads its data: a retryable ConnectionError without the ready check, a wait with it', async () => {
  const redis = await startRedis({ controllable: true });
  servers.push(redis);
  const admin = new Redis(redis.url);
  await admin.call('DEBUG', 'POPULATE', '1000000', 'filler', '32');
  await admin.call('SAVE'); // dump.rdb in the server's dir: loaded again by the restart
  admin.disconnect();
  const prefix = uniquePrefix();
  const noReadyCheck = new Queue<number>('loading', { connection: { url: redis.url, enableReadyCheck: false }, prefix });
  // a reply timeout longer than any load on a busy machine: the add waits in the client's queue
  const withReadyCheck = new Queue<number>('loading', { connection: { url: redis.url, commandTimeout: 60_000 }, prefix });
  closers.push(() => noReadyCheck.close(), () => withReadyCheck.close());
  await Promise.all([noReadyCheck.counts(), withReadyCheck.counts()]);

  await redis.kill();
  const restarting = redis.restart(); // resolves once PING answers: after the data is loaded
  const errors: unknown[] = [];
  let loaded = false;
  void restarting.then(() => (loaded = true));
  let waited: Promise<unknown> | undefined;
  while (!loaded) {
    try {
      await noReadyCheck.add(1);
    } catch (err) {
      errors.push(err);
      // Redis is up and loading: a queue whose client checks readiness waits instead
      if (!waited && err instanceof ConnectionError && /LOADING/.test(err.message)) waited = withReadyCheck.add(2);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const loading = errors.filter((e) => e instanceof ConnectionError && /not serving right now: LOADING/.test(e.message));
  expect(loading.length).toBeGreaterThan(0);
  expect(loading[0]).toMatchObject({ code: 'RELQ_CONNECTION', retryable: true });
  expect(errors.some((e) => e instanceof ValidationError)).toBe(false);
  expect(waited).toBeDefined();
  await expect(waited).resolves.toMatchObject({ created: true });
}, 60_000);

test('READONLY from a replica (a client left on a demoted master): a retryable ConnectionError', async () => {
  const master = await startRedis({ controllable: true });
  servers.push(master);
  const replica = await startRedis({ extraArgs: ['--replicaof', master.host, String(master.port)] });
  servers.push(replica);
  const q = new Queue<number>('readonly', { connection: replica.url, prefix: uniquePrefix() });
  closers.push(() => q.close());
  const err = (await q.add(1).catch((e: unknown) => e)) as ConnectionError;
  expect(err).toBeInstanceOf(ConnectionError);
  expect(err).toMatchObject({ retryable: true });
  expect(err.message).toMatch(/is not serving right now: READONLY/);
});

test('a client passed in without a reply timeout: a call to a frozen server fails after 10 s instead of waiting forever', async () => {
  const redis = await startRedis({ controllable: true });
  servers.push(redis);
  const own = new Redis(redis.url); // no commandTimeout
  closers.push(async () => own.disconnect());
  const q = new Queue<number>('frozen', { connection: own, prefix: uniquePrefix() });
  closers.push(() => q.close());
  await q.add(1);
  redis.pause();
  try {
    const t0 = Date.now();
    const err = (await q.add(2).catch((e: unknown) => e)) as ConnectionError;
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toMatch(/no reply within 10000 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(9000);
  } finally {
    redis.resume();
  }
}, 30_000);
