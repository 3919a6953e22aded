/**
 * Tenants sharing one Redis, each a user made from the README's ACL line for its own prefix.
 * Function libraries are global to a server: a tenant that could load one under relq's name
 * would run its code in every other tenant's calls (read their jobs, drop their adds). Under
 * the README's line no tenant may load functions; relq reads its library's code back before
 * it calls it, so other code planted by a user that may (or registering relq's function names)
 * is never called: scripts run instead, with a warning. An administrator loads the library
 * (`relq functions load`), and tenants then call it.
 */
import type { Redis } from 'ioredis';
import { functionLibraryStatus, loadFunctionLibrary, Queue, type RelqWarning } from '../../lib/index.js';
import { scriptCode } from '../../lib/core/redis/script-code.js';
import { CliHarness } from '../support/cli-harness.js';
import { commandStats, statsDelta } from '../support/engine-harness.js';
import { README_ACL_PASSWORD, readmeAclLine, runAclLine } from '../support/acl.js';
import { hostileLibrary } from '../support/hostile-library.js';
import { redisClient, startRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
let admin: Redis;
const cli = new CliHarness();
const closers: Array<() => Promise<unknown>> = [];

/** The README's line for `prefix`, as user `user`. */
const tenantLine = (user: string, prefix: string) => readmeAclLine().replace('relq-app', user).replace(/\{myapp:/g, `{${prefix}:`);
const tenantUrl = (user: string) => `redis://${user}:${README_ACL_PASSWORD}@${redis.host}:${redis.port}`;

beforeAll(async () => {
  redis = await startRedis({ controllable: true });
  admin = redisClient(redis);
  await runAclLine(admin, tenantLine('tenant-a', 'tenanta'));
  await runAclLine(admin, tenantLine('tenant-b', 'tenantb'));
  // allowed to call the library but not to read it, as lines written for older relq versions
  await runAclLine(admin, tenantLine('tenant-c', 'tenantc').replace(' +function|list', ''));
  cli.build();
}, 60_000);
afterAll(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  admin?.disconnect();
  await cli.stopAll();
  await redis?.stop();
});
beforeEach(async () => {
  await admin.call('FUNCTION', 'FLUSH'); // each test starts with no library on the server
});

/** A connection of tenant A's, as its own code would open one. */
function tenantA(): Redis {
  const c = redisClient(redis, { username: 'tenant-a', password: README_ACL_PASSWORD });
  closers.push(async () => c.disconnect());
  return c;
}

/** A queue of tenant B's (or of the default user: a single-user set-up), its warnings collected. */
function queueOf(connection: string, prefix: string, warnings: RelqWarning[] = []): Queue<{ secret: string }> {
  const q = new Queue<{ secret: string }>('orders', { connection, prefix, onWarning: (w) => warnings.push(w) });
  closers.push(() => q.close());
  return q;
}

/** B's job as stored, read by the administrator: undefined when the add stored nothing. */
async function storedData(q: Queue, id: string): Promise<string | undefined> {
  return (await admin.hget(q.keys.byName.jobs, id)) ?? undefined;
}

/** FCALL / EVALSHA+EVAL calls the server saw during `work`. */
async function callsDuring(work: () => Promise<unknown>): Promise<{ fcall: number; scripts: number }> {
  const before = await commandStats(admin);
  await work();
  const d = statsDelta(before, await commandStats(admin));
  return { fcall: d.fcall ?? 0, scripts: (d.evalsha ?? 0) + (d.eval ?? 0) };
}

test("a tenant may not load, replace or delete functions; B's adds are stored (FCALL of the administrator's library) and A reads none of B's data", async () => {
  await loadFunctionLibrary(redis.url); // the administrator's deploy step
  const a = tenantA();
  const { libraryName } = scriptCode();
  // the takeover: relq's library replaced by one with a stash, and the other ways to change it
  for (const args of [
    ['LOAD', 'REPLACE', hostileLibrary(libraryName, 'relq_stash')],
    ['LOAD', hostileLibrary('tenant_a_lib', 'tenant_a_stash')],
    ['DELETE', libraryName],
    ['FLUSH'],
    ['RESTORE', 'x'],
  ]) {
    await expect(a.call('FUNCTION', ...args)).rejects.toThrow(/NOPERM/);
  }

  const warnings: RelqWarning[] = [];
  const b = queueOf(tenantUrl('tenant-b'), 'tenantb', warnings);
  let id = '';
  const calls = await callsDuring(async () => (id = (await b.add({ secret: 'b-secret-1' })).id));
  expect(calls).toEqual({ fcall: expect.any(Number), scripts: 0 });
  expect(calls.fcall).toBeGreaterThan(0);
  expect(await storedData(b, id)).toContain('b-secret-1');
  expect((await b.getJob(id))!.data).toEqual({ secret: 'b-secret-1' });
  expect(warnings).toEqual([]);

  // A reaches B's job neither directly, nor through relq's own functions, nor through a stash
  await expect(a.hget(b.keys.byName.jobs, id)).rejects.toThrow(/NOPERM/);
  await expect(a.fcall(scriptCode().functionName.getJob, b.keys.call.length, ...b.keys.call, id)).rejects.toThrow(/NOPERM/);
  await expect(a.fcall('relq_stash', 0)).rejects.toThrow(/Function not found/);
  expect((await functionLibraryStatus(redis.url)).nodes.map((n) => n.state)).toEqual(['loaded']);
}, 60_000);

test('other code planted under relq\'s name before the first call is detected and never called: scripts run, with a warning', async () => {
  await admin.call('FUNCTION', 'LOAD', hostileLibrary(scriptCode().libraryName, 'relq_stash')); // a user with FUNCTION LOAD
  for (const [who, url, prefix] of [
    ['tenant B', tenantUrl('tenant-b'), 'tenantb'],
    ['the default user', redis.url, 'single'],
  ] as const) {
    const warnings: RelqWarning[] = [];
    const q = queueOf(url, prefix, warnings);
    let id = '';
    const calls = await callsDuring(async () => (id = (await q.add({ secret: `${prefix}-secret` })).id));
    expect({ who, fcall: calls.fcall }).toEqual({ who, fcall: 0 });
    expect(calls.scripts).toBeGreaterThan(0);
    expect({ who, stored: await storedData(q, id) }).toEqual({ who, stored: expect.stringContaining(`${prefix}-secret`) });
    expect(warnings).toEqual([
      {
        code: 'RELQ_LIBRARY_MISMATCH',
        queue: 'orders',
        message: expect.stringMatching(/holds other code than this relq version's.*does not call it.*scripts \(EVALSHA\).*relq functions load/),
      },
    ]);
    await q.add({ secret: 'again' });
    expect(warnings).toHaveLength(1); // once per check, not per call
  }
  expect(await admin.fcall('relq_stash', 0)).toEqual([]); // nothing ever ran through it
  // relq never replaces it by itself (the default user could): that is the administrator's call
  expect((await functionLibraryStatus(redis.url)).nodes).toEqual([{ node: `${redis.host}:${redis.port}`, state: 'different' }]);
}, 60_000);

test("a library of another name that registers relq's function names is never called", async () => {
  await admin.call('FUNCTION', 'LOAD', hostileLibrary('not_relq', 'not_relq_stash'));
  const warnings: RelqWarning[] = [];
  const single = queueOf(redis.url, 'single', warnings);
  const tenant = queueOf(tenantUrl('tenant-b'), 'tenantb');
  for (const q of [single, tenant]) {
    const calls = await callsDuring(() => q.add({ secret: 'kept' }, { jobId: 'k' }));
    expect(calls.fcall).toBe(0);
    expect(await storedData(q, 'k')).toContain('kept');
  }
  // the default user tried to load relq's library and met the other one's names
  expect(warnings.map((w) => [w.code, w.message])).toEqual([['RELQ_LIBRARY_MISMATCH', expect.stringMatching(/registers relq's function names/)]]);
  expect(await admin.fcall('not_relq_stash', 0)).toEqual([]);
}, 60_000);

test('`relq functions load` by an administrator: a tenant then calls the library (FCALL), also a tenant queue that ran scripts, after it reconnects', async () => {
  const b = queueOf(tenantUrl('tenant-b'), 'tenantb');
  // no library and no right to load it: scripts, silently
  expect(await callsDuring(() => b.add({ secret: 'before' }))).toMatchObject({ fcall: 0 });
  const tenantStatus = await cli.run(['--redis', tenantUrl('tenant-b'), 'functions', 'status']);
  expect(tenantStatus.code).toBe(1);
  expect(tenantStatus.stdout).toMatch(/missing/);
  const refused = await cli.run(['--redis', tenantUrl('tenant-b'), 'functions', 'load']);
  expect(refused.code).toBe(5); // PermissionError: a tenant may not load functions
  expect(refused.stderr).toMatch(/NOPERM/);
  expect(`${refused.stdout}${refused.stderr}`).not.toContain(README_ACL_PASSWORD);

  const loaded = await cli.run(['--redis', redis.url, '--json', 'functions', 'load']);
  expect(loaded.code).toBe(0);
  expect(JSON.parse(loaded.stdout)).toEqual({ library: scriptCode().libraryName, nodes: [{ node: `${redis.host}:${redis.port}`, was: 'missing' }] });
  const status = await cli.run(['--redis', tenantUrl('tenant-b'), 'functions', 'status']);
  expect(status.code).toBe(0);
  expect(status.stdout.trimEnd()).toMatch(new RegExp(`^library ${scriptCode().libraryName}\\nNODE\\s+STATE\\n${redis.host}:${redis.port}\\s+loaded$`));

  const fresh = queueOf(tenantUrl('tenant-b'), 'tenantb');
  const first = await callsDuring(() => fresh.add({ secret: 'fcall' }));
  expect(first.scripts).toBe(0);
  expect(first.fcall).toBeGreaterThan(0);
  // the queue that checked before the load keeps its scripts until its connection is new
  expect(await callsDuring(() => b.add({ secret: 'still scripts' }))).toMatchObject({ fcall: 0 });
  await admin.call('CLIENT', 'KILL', 'USER', 'tenant-b');
  expect(await callsDuring(() => b.add({ secret: 'after' }))).toEqual({ fcall: 1, scripts: 0 });
}, 60_000);

test('the library is read again on a new connection: other code loaded meanwhile is found then', async () => {
  await loadFunctionLibrary(redis.url);
  const warnings: RelqWarning[] = [];
  const b = queueOf(tenantUrl('tenant-b'), 'tenantb', warnings);
  expect((await callsDuring(() => b.add({ secret: 'one' }))).fcall).toBeGreaterThan(0);
  await loadFunctionLibraryOver(); // a user with FUNCTION LOAD replaces it, then B reconnects (restart, failover)
  await admin.call('CLIENT', 'KILL', 'USER', 'tenant-b');
  const calls = await callsDuring(() => b.add({ secret: 'two' }, { jobId: 'two' }));
  expect(calls.fcall).toBe(0);
  expect(await storedData(b, 'two')).toContain('two');
  expect(warnings.map((w) => w.code)).toEqual(['RELQ_LIBRARY_MISMATCH']);
  expect(await admin.fcall('relq_stash', 0)).toEqual([]);
}, 60_000);

test('a user that may call the library but not read it runs scripts, even where it is loaded: relq never calls code it could not read', async () => {
  await loadFunctionLibrary(redis.url);
  const warnings: RelqWarning[] = [];
  const c = queueOf(tenantUrl('tenant-c'), 'tenantc', warnings);
  const calls = await callsDuring(() => c.add({ secret: 'c' }, { jobId: 'c1' }));
  expect(calls.fcall).toBe(0);
  expect(calls.scripts).toBeGreaterThan(0);
  expect(await storedData(c, 'c1')).toContain('"secret":"c"');
  expect(warnings).toEqual([]);
}, 60_000);

/** Replaces relq's library with the hostile one, as a user with FUNCTION LOAD could. */
async function loadFunctionLibraryOver(): Promise<void> {
  await admin.call('FUNCTION', 'LOAD', 'REPLACE', hostileLibrary(scriptCode().libraryName, 'relq_stash'));
}
