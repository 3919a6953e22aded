/**
 * An evicted key is a lost job: on first use a queue reads maxmemory-policy (where CONFIG
 * GET is allowed) and warns once per connection when it is not noeviction; `evictionCheck`
 * turns the warning into an error ('error') or off ('off').
 */
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { Queue, ServerConfigError, type RelqWarning } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

let lru: TestRedis;
let safe: TestRedis;
const opened: Array<{ close(): Promise<unknown> }> = [];

beforeAll(async () => {
  [lru, safe] = await Promise.all([
    startRedis({ extraArgs: ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'] }),
    startRedis({ controllable: true }),
  ]);
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close().catch(() => undefined)));
});
afterAll(async () => {
  await Promise.all([lru?.stop(), safe?.stop()]);
});

function queue(server: TestRedis, opts: ConstructorParameters<typeof Queue>[1] = {}): Queue<string> {
  const q = new Queue<string>('jobs', { connection: server.url, prefix: uniquePrefix(), ...opts });
  opened.push(q);
  return q;
}

describe('maxmemory-policy check', () => {
  test("'warn' (default): one clear warning per connection, and the queue works", async () => {
    const warnings: RelqWarning[] = [];
    const client = new Redis(lru.url);
    opened.push({ close: () => client.quit() });
    const a = queue(lru, { connection: client, onWarning: (w) => warnings.push(w) });
    const b = queue(lru, { connection: client, onWarning: (w) => warnings.push(w) });
    await a.add('x');
    await b.add('y');
    await a.counts();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.code).toBe('RELQ_EVICTION_POLICY');
    expect(warnings[0]!.message).toMatch(/maxmemory-policy is 'allkeys-lru'/);
    expect(warnings[0]!.message).toMatch(/deletes whole keys.*loses jobs/);
    expect(warnings[0]!.message).toMatch(/noeviction/);
    expect((await a.counts()).pending).toBe(1);
  });

  test('without onWarning it is a Node process warning', async () => {
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const q = queue(lru);
      await q.add('x');
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]![0]).toMatch(/allkeys-lru/);
      expect(spy.mock.calls[0]![1]).toMatchObject({ type: 'RelqWarning', code: 'RELQ_EVICTION_POLICY' });
    } finally {
      spy.mockRestore();
    }
  });

  test("'error': every call of the queue fails with ServerConfigError and nothing is written", async () => {
    const q = queue(lru, { evictionCheck: 'error' });
    const err = await q.add('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerConfigError);
    expect(err).toMatchObject({ code: 'RELQ_SERVER_CONFIG', setting: 'maxmemory-policy', value: 'allkeys-lru', retryable: false });
    await expect(q.counts()).rejects.toBeInstanceOf(ServerConfigError);
    const obs = new Redis(lru.url);
    try {
      expect(await obs.keys(`*${q.prefix}*`)).toEqual([]);
    } finally {
      obs.disconnect();
    }
  });

  test("'off': no check, no warning", async () => {
    const warnings: RelqWarning[] = [];
    const q = queue(lru, { evictionCheck: 'off', onWarning: (w) => warnings.push(w) });
    await q.add('x');
    expect(warnings).toEqual([]);
  });

  test('noeviction: no warning, even in error mode', async () => {
    const warnings: RelqWarning[] = [];
    const q = queue(safe, { evictionCheck: 'error', onWarning: (w) => warnings.push(w) });
    await q.add('x');
    expect(warnings).toEqual([]);
  });

  test('a user without CONFIG rights: the check is skipped and the queue works', async () => {
    const admin = new Redis(safe.url);
    opened.push({ close: () => admin.quit() });
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    try {
      await admin.call('ACL', 'SETUSER', 'noconfig', 'on', '>pw-noconfig', '~*', '&*', '+@all', '-config');
      const warnings: RelqWarning[] = [];
      const url = `redis://noconfig:pw-noconfig@${safe.host}:${safe.port}`;
      const q = queue(safe, { connection: url, evictionCheck: 'error', onWarning: (w) => warnings.push(w) });
      await q.add('x');
      expect((await q.counts()).pending).toBe(1);
      expect(warnings).toEqual([]);
      // the same server read by a user who may: refused
      const checked = queue(safe, { evictionCheck: 'error' });
      await expect(checked.add('y')).rejects.toMatchObject({ value: 'volatile-lru' });
      const user = new Redis(url);
      opened.push({ close: () => user.quit() });
      await expect(user.config('GET', 'maxmemory-policy')).rejects.toThrow(/NOPERM/);
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  test('a bad evictionCheck value is a ValidationError before anything connects', () => {
    expect(() => new Queue('jobs', { connection: safe.url, evictionCheck: 'maybe' as never })).toThrow(/evictionCheck: must be one of 'warn', 'error', 'off'/);
  });
});
