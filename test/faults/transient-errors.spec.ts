/**
 * Redis states that end by themselves are retryable ConnectionErrors, told apart from bad
 * requests: LOADING after a restart, READONLY from a replica. (CLUSTERDOWN is in
 * test/cluster/failover.spec.ts, the TLS and auth failures in test/security.)
 */
import { Redis } from 'ioredis';
import { ConnectionError, Queue, ValidationError } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const servers: TestRedis[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
  await Promise.all(servers.map((s) => s.stop()));
});

test('LOADING while a restarted server reads its data: calls wait for the load (without INFO) within their reply wait; past it a retryable ConnectionError', async () => {
  // 2400 keys read 2.5 ms apart: a load of about 6 s (restart() waits up to 10 s), answering LOADING meanwhile
  const redis = await startRedis({ controllable: true, extraArgs: ['--key-load-delay', '2500', '--loading-process-events-interval-bytes', '1024'] });
  servers.push(redis);
  const admin = new Redis(redis.url);
  await admin.call('DEBUG', 'POPULATE', '2400', 'filler', '32');
  await admin.call('SAVE'); // dump.rdb in the server's dir: loaded again by the restart
  admin.disconnect();
  const prefix = uniquePrefix();
  const hasty = new Queue<number>('loading', { connection: { url: redis.url, commandTimeout: 1000 }, prefix });
  const patient = new Queue<number>('loading', { connection: { url: redis.url, commandTimeout: 60_000 }, prefix });
  closers.push(() => hasty.close(), () => patient.close());
  await Promise.all([hasty.counts(), patient.counts()]);

  await redis.kill();
  const restarting = redis.restart(); // resolves once PING answers: after the data is loaded
  const probe = new Redis(redis.url, { enableReadyCheck: false, retryStrategy: () => 50 });
  closers.push(async () => probe.disconnect());
  await waitUntil(async () => /^LOADING/.test(await probe.ping().then(String, (e: Error) => e.message)), 'the server to be loading', 20_000, 50);
  const started = Date.now();
  const [timedOut, waited] = await Promise.allSettled([hasty.add(1), patient.add(2)]);
  await restarting;

  // the short wait ran out while the server was still loading: a retryable ConnectionError naming LOADING
  expect(timedOut.status).toBe('rejected');
  const err = (timedOut as PromiseRejectedResult).reason as ConnectionError;
  expect(err).toBeInstanceOf(ConnectionError);
  expect(err).toMatchObject({ code: 'RELQ_CONNECTION', retryable: true });
  expect(err.message).toMatch(/not serving right now: LOADING/);
  // the long one waited for the load and went through
  expect(waited).toMatchObject({ status: 'fulfilled', value: { created: true } });
  expect(Date.now() - started).toBeGreaterThan(2000);
  expect((await patient.counts()).pending).toBe(1);
  // neither asked INFO (no ready check): a user without INFO connects the same way
  const stats = new Redis(redis.url, { enableReadyCheck: false });
  closers.push(async () => stats.disconnect());
  expect(await stats.info('commandstats')).not.toMatch(/cmdstat_info:/);
}, 90_000);

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
