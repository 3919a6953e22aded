/**
 * A least-privilege ACL user for one prefix: the README's exact `ACL SETUSER` line, run
 * verbatim; the engine's core behaviour as that user, calling the function library an
 * administrator loaded; a user without FUNCTION rights (and one allowed EVALSHA but not FCALL)
 * falls back to scripts; refused keys, commands and passwords are typed errors that never
 * show the password. (Tenants sharing a server: multi-tenant.spec.ts.)
 */
import { jest } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { AuthenticationError, loadFunctionLibrary, PermissionError, PartitionedQueue, Queue, Worker, type RelqWarning } from '../../lib/index.js';
import { README_ACL_PASSWORD, readmeAclLine, runAclLine } from '../support/acl.js';
import { describeCoreBehaviour } from '../support/core-behaviour.js';
import { redisClient, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const PASSWORD = README_ACL_PASSWORD;

let redis: TestRedis;
let admin: Redis;

beforeAll(async () => {
  redis = await startRedis({ controllable: true });
  admin = redisClient(redis);
  await loadFunctionLibrary(redis.url); // the administrator's step: the README's user may not load it
  await runAclLine(admin, readmeAclLine());
  // Variants of the same user: no FUNCTION rights at all, and EVALSHA but not FCALL.
  const base = readmeAclLine();
  await runAclLine(admin, base.replace('relq-app', 'relq-nofunc').replace(' +fcall +fcall_ro +function|list', ''));
  await runAclLine(admin, base.replace('relq-app', 'relq-nofcall').replace(' +fcall +fcall_ro', ''));
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

const userUrl = (user: string, password = PASSWORD) => `redis://${user}:${password}@${redis.host}:${redis.port}`;

test('the README line makes a user that may not run FLUSHALL, KEYS, CONFIG or DEBUG, nor touch other keys', async () => {
  const user = new Redis(userUrl('relq-app'));
  try {
    for (const cmd of [['FLUSHALL'], ['KEYS', '*'], ['CONFIG', 'GET', 'maxmemory'], ['DEBUG', 'SLEEP', '0'], ['INFO'], ['GET', 'other:key']]) {
      await expect(user.call(cmd[0]!, ...cmd.slice(1))).rejects.toThrow(/NOPERM/);
    }
    await expect(user.set('{myapp:x}:probe', '1')).resolves.toBe('OK');
  } finally {
    user.disconnect();
  }
});

test('the README line allows every command the Lua code calls (a script runs under its caller\'s ACL)', () => {
  const allowed = new Set(readmeAclLine().split(' ').filter((w) => w.startsWith('+')).map((w) => w.slice(1).toUpperCase()));
  const called = new Set<string>();
  const lua = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? lua(join(dir, e.name)) : e.name.endsWith('.lua') ? [join(dir, e.name)] : []));
  for (const file of lua(join(process.cwd(), 'lib', 'core'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:redis\.p?call|callMany|readMany)\('([A-Z]+)'/g)) called.add(m[1]!);
  }
  expect(called.size).toBeGreaterThan(40);
  expect([...called].filter((c) => !allowed.has(c)).sort()).toEqual([]);
});

test('as the README user: rate limits, delayed ties, a flow parent read back, the metrics history and the shared limits', async () => {
  const q = new Queue<{ n: number }>(`acl-more-${uniquePrefix()}`, {
    connection: userUrl('relq-app'),
    prefix: 'myapp',
    limiter: { max: 100, durationMs: 1000 },
    metrics: true,
  });
  try {
    const at = Date.now() + 60_000;
    await q.add({ n: 1 }, { runAt: at });
    await q.add({ n: 2 }, { runAt: at }); // a tie: the due time's own list
    await q.addFlow({ data: { n: 3 }, children: [{ data: { n: 4 } }] });
    const [child] = await q.lease();
    expect(await q.ack(child!, 'done')).toBe(true);
    const parent = (await q.getJobs('pending')).find((j) => j.data.n === 3);
    expect((await q.getJob(parent!.id))?.children).toBeDefined();
    expect((await q.counts()).delayed).toBe(2);
    expect((await q.getMetrics()).total.completed).toBe(1);
    await q.setGlobalConcurrency(3);
    await q.setGroupOverride('vip', { concurrency: 2 });
    expect(await q.queueState()).toMatchObject({ globalConcurrency: 3, groupOverrides: { vip: { concurrency: 2 } } });
  } finally {
    await q.deleteQueue();
    await q.close();
  }
});

test('as the README user: a partitioned queue grows, its handover looks through the old partitions, and its worker follows', async () => {
  const q = new PartitionedQueue<{ n: number }>(`acl-grow-${uniquePrefix()}`, { connection: userUrl('relq-app'), prefix: 'myapp', partitions: 2 });
  const w = new Worker(q, async () => undefined, { concurrency: 2, blockMs: 500 });
  try {
    for (let n = 0; n < 10; n++) await q.add({ n }, { partitionKey: `k${n}` });
    w.start();
    expect(await q.resize(4)).toMatchObject({ partitions: 4, handedOver: true });
    for (let n = 10; n < 20; n++) await q.add({ n }, { partitionKey: `k${n}` });
    await waitUntil(async () => (await q.counts()).completed === 20, 'every job done', 10_000);
    expect((await q.countsByPartition()).length).toBe(4);
  } finally {
    await w.close();
    await q.deleteQueue();
    await q.close();
  }
});

describeCoreBehaviour('as the README\'s least-privilege ACL user', () => ({ connection: () => userUrl('relq-app'), prefix: 'myapp' }));
describeCoreBehaviour('as an ACL user without FUNCTION rights (scripts)', () => ({ connection: () => userUrl('relq-nofunc'), prefix: 'myapp' }));
describeCoreBehaviour('as an ACL user allowed EVALSHA but not FCALL', () => ({ connection: () => userUrl('relq-nofcall'), prefix: 'myapp' }));

describe('refusals', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c().catch(() => undefined);
  });
  const queue = (connection: string, prefix: string, opts = {}) => {
    const q = new Queue<string>(`acl-${uniquePrefix()}`, { connection, prefix, ...opts });
    closers.push(() => q.close());
    return q;
  };

  test("the README's user calls the library the administrator loaded (FCALL, no script)", async () => {
    const before = await admin.info('commandstats');
    const calls = (info: string, cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    const q = queue(userUrl('relq-app'), 'myapp');
    await q.add('x');
    const [l] = await q.lease();
    expect(await q.ack(l!)).toBe(true);
    const after = await admin.info('commandstats');
    expect(calls(after, 'fcall') - calls(before, 'fcall')).toBeGreaterThanOrEqual(3);
    expect(calls(after, 'evalsha') + calls(after, 'eval') - calls(before, 'evalsha') - calls(before, 'eval')).toBe(0);
  });

  test('a user without FCALL runs scripts instead (EVALSHA on the server, no FCALL)', async () => {
    const before = await admin.info('commandstats');
    const calls = (info: string, cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    const q = queue(userUrl('relq-nofcall'), 'myapp');
    await q.add('x');
    const [l] = await q.lease();
    expect(await q.ack(l!)).toBe(true);
    const after = await admin.info('commandstats');
    expect(calls(after, 'evalsha') + calls(after, 'eval') - calls(before, 'evalsha') - calls(before, 'eval')).toBeGreaterThanOrEqual(3);
  });

  test('a wrong password: AuthenticationError naming the refusal, never the password', async () => {
    const warnings: RelqWarning[] = [];
    const q = queue(userUrl('relq-app', 'not-the-password-42'), 'myapp', { onWarning: (w: RelqWarning) => warnings.push(w) });
    const err = (await q.add('x').catch((e: unknown) => e)) as AuthenticationError;
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ code: 'RELQ_AUTH', retryable: false });
    expect(err.message).toMatch(/refused the credentials: WRONGPASS/);
    const everything = JSON.stringify({ message: err.message, stack: err.stack, cause: String(err.cause), warnings });
    expect(everything).not.toContain('not-the-password-42');
  });

  test('a queue outside the user\'s prefix: PermissionError naming NOPERM, nothing written', async () => {
    const warnings: RelqWarning[] = []; // the refused registry key is reported too (test/cli/queue-registry.spec.ts)
    const q = queue(userUrl('relq-app'), 'otherapp', { onWarning: (w: RelqWarning) => warnings.push(w) });
    const err = (await q.add('x').catch((e: unknown) => e)) as PermissionError;
    expect(err).toBeInstanceOf(PermissionError);
    expect(err).toMatchObject({ code: 'RELQ_NOPERM', retryable: false });
    expect(err.message).toMatch(/may not do this.*NOPERM/);
    expect(JSON.stringify({ message: err.message, warnings })).not.toContain(PASSWORD);
    expect(await admin.keys('{otherapp:*')).toEqual([]);
  });

  test('the line has no +info, and relq connects without it: no ready-check warning, and the queue works', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const q = queue(userUrl('relq-app'), 'myapp');
      const worker = new Worker<string>(q, async () => undefined, { blockMs: 200 }); // its blocking connection too
      closers.unshift(() => worker.close());
      const { id } = await q.add('x');
      await waitUntil(async () => (await q.getJob(id))?.state === 'completed', 'the job to complete');
      expect(warn.mock.calls.map((c) => String(c[0])).filter((m) => /ready check|INFO/.test(m))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
