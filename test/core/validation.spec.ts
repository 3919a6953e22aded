/**
 * Bad input: a typed, exported error naming the culprit (`field`), and nothing written
 * to Redis (no key appears, no script runs).
 */
import { inspect } from 'node:util';
import type { Redis } from 'ioredis';
import { PayloadTooLargeError, Queue, RelqError, ValidationError, Worker } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { Resources, commandStats, scriptCalls, statsDelta, waitUntil } from '../support/engine-harness.js';

let redis: TestRedis;
let obs: Redis;
const res = new Resources(() => redis);
beforeAll(async () => {
  redis = await startRedis();
});
beforeEach(() => {
  obs = res.client();
});
afterEach(() => res.closeAll());
afterAll(async () => {
  await redis.stop();
});

/** Runs `fn` (sync throw or rejection), returns the error; fails if nothing was thrown. */
async function errorOf(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error, but the call succeeded');
}

/** Asserts a ValidationError (or subclass) for `field`, and that Redis saw no write and no script. */
async function expectInvalid(
  fn: () => unknown,
  field: string | RegExp,
  type: new (...args: never[]) => ValidationError = ValidationError,
): Promise<ValidationError> {
  const keysBefore = await obs.dbsize();
  const before = await commandStats(obs);
  const err = await errorOf(fn);
  const d = statsDelta(before, await commandStats(obs));
  expect(err).toBeInstanceOf(type);
  expect(err).toBeInstanceOf(RelqError);
  const v = err as ValidationError;
  if (typeof field === 'string') expect(v.field).toBe(field);
  else expect(v.field).toMatch(field);
  expect(v.code).toBe('RELQ_INVALID_ARGUMENT');
  expect(v.message).toContain(v.field);
  expect(await obs.dbsize()).toBe(keysBefore);
  expect(scriptCalls(d)).toBe(0);
  return v;
}

function newQueue(name: unknown, opts: Record<string, unknown> = {}): Queue {
  const q = new Queue(name as string, { connection: redis.url, prefix: uniquePrefix(), ...opts } as never);
  res.track(q);
  return q;
}

describe('queue construction', () => {
  test.each([
    ['empty', ''],
    ['129 characters', 'x'.repeat(129)],
    ['a NUL', 'a\u0000b'],
    ['a newline', 'a\nb'],
    ['DEL', 'a\u007f'],
    ['a C1 control', 'a\u0085'],
    ['{', 'a{b'],
    ['}', 'a}b'],
    ['a number', 42],
    ['undefined', undefined],
  ])('queue name with %s is refused', async (_label, name) => {
    await expectInvalid(() => newQueue(name), 'queue name');
  });

  test('a 128-character name and printable unicode are fine', async () => {
    const q = newQueue('x'.repeat(128));
    const u = newQueue('émails-✓ with spaces:and:colons');
    expect((await q.add(1)).created).toBe(true);
    expect((await u.add(1)).created).toBe(true);
  });

  test.each([
    ['with ":"', 'a:b'],
    ['empty', ''],
    ['with braces', '{p}'],
    ['with a control character', 'p\t'],
    // glob characters would widen the README's ACL key pattern ~{<prefix>:* to other prefixes
    ['with "*"', 'ten*'],
    ['with "?"', 'tenant?'],
    ['with "["', 'ten[a'],
    ['with "]"', 'tena]'],
    ['with a backslash', 'ten\\a'],
  ])('prefix %s is refused', async (_label, prefix) => {
    await expectInvalid(() => newQueue('q', { prefix }), 'prefix');
  });

  test.each([
    ['unknown option', { retries: 3 }, 'queue options'],
    ['unknown defaults key', { defaults: { retries: 3 } }, 'defaults'],
    ['defaults.attempts 0', { defaults: { attempts: 0 } }, 'defaults.attempts'],
    ['defaults.leaseMs 1.5', { defaults: { leaseMs: 1.5 } }, 'defaults.leaseMs'],
    ['defaults.leaseMs 9', { defaults: { leaseMs: 9 } }, 'defaults.leaseMs'],
    ['defaults.keepCompletedMs -1', { defaults: { keepCompletedMs: -1 } }, 'defaults.keepCompletedMs'],
    ['defaults.keepCompleted.count 0', { defaults: { keepCompleted: { count: 0 } } }, 'defaults.keepCompleted.count'],
    ['defaults.keepDead.ageMs past MAX_MS', { defaults: { keepDead: { ageMs: 2 ** 41 + 1 } } }, 'defaults.keepDead.ageMs'],
    ['defaults.backoff.type', { defaults: { backoff: { type: 'linear', delayMs: 1 } } }, 'defaults.backoff.type'],
    ['maxPayloadBytes 0', { maxPayloadBytes: 0 }, 'maxPayloadBytes'],
    ['maxPayloadBytes NaN', { maxPayloadBytes: Number.NaN }, 'maxPayloadBytes'],
    ['maxPayloadBytes 1.5', { maxPayloadBytes: 1.5 }, 'maxPayloadBytes'],
    ['bound -1', { bound: -1 }, 'bound'],
    ['stats "yes"', { stats: 'yes' }, 'stats'],
    ['exclusive.owner', { exclusive: { owner: true } }, 'exclusive'],
    ['checkClosed false with a bound', { bound: 5, checkClosed: false }, 'checkClosed'],
    ['checkClosed false with stats', { stats: true, checkClosed: false }, 'checkClosed'],
    ['checkClosed false with an exclusive producer', { exclusive: { producer: true }, checkClosed: false }, 'checkClosed'],
  ])('queue options: %s', async (_label, opts, field) => {
    await expectInvalid(() => newQueue('q', opts), field);
  });

  test('a refused Queue opens no connection', async () => {
    const clients = async (): Promise<number> => ((await obs.client('LIST')) as string).trim().split('\n').length;
    const before = await clients();
    // what a valid Queue opens for one call
    const reference = newQueue('q');
    await reference.counts();
    const perQueue = (await clients()) - before;
    expect(perQueue).toBeGreaterThan(0);
    await reference.close();
    await waitUntil(async () => (await clients()) === before, 'the reference queue disconnected', 10_000);

    for (const opts of [{ bound: -1 }, { bound: 5, checkClosed: false }, { maxPayloadBytes: 0 }]) {
      await expectInvalid(() => newQueue('q', opts), /./);
    }
    // A valid Queue made afterwards: Redis accepts connections in the order they were
    // opened, so once this one has answered, any connection a refused Queue had opened
    // before it would be listed too.
    const probe = newQueue('q');
    await probe.counts();
    expect(await clients()).toBe(before + perQueue);
  });

  test('events must be a boolean', async () => {
    await expectInvalid(() => newQueue('q', { events: 'false' }), 'events');
  });

  test('connection must be a URL, ioredis options or a client (not a number)', async () => {
    await expectInvalid(() => newQueue('q', { connection: 42 }), 'connection');
  });

  test('a URL that does not parse is a ValidationError that shows no password', async () => {
    for (const connection of ['redis://app:s3cret-pw@[bad', { url: 'rediss://app:s3cret-pw@host:notaport' }]) {
      const field = typeof connection === 'string' ? 'connection' : 'connection.url';
      const err = await expectInvalid(() => newQueue('q', { connection }), field);
      expect(err.message).toMatch(/is not a valid URL/);
      for (const text of [err.message, String(err.stack), JSON.stringify(err), inspect(err)]) expect(text).not.toContain('s3cret-pw');
    }
  });
});

describe('job options', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['delayMs -1', { delayMs: -1 }, 'opts.delayMs'],
    ['delayMs 1.5', { delayMs: 1.5 }, 'opts.delayMs'],
    ['delayMs NaN', { delayMs: Number.NaN }, 'opts.delayMs'],
    ['delayMs Infinity', { delayMs: Number.POSITIVE_INFINITY }, 'opts.delayMs'],
    ['delayMs as a string', { delayMs: '100' }, 'opts.delayMs'],
    ['attempts 0', { attempts: 0 }, 'opts.attempts'],
    ['attempts -1', { attempts: -1 }, 'opts.attempts'],
    ['attempts 2.5', { attempts: 2.5 }, 'opts.attempts'],
    ['attempts NaN', { attempts: Number.NaN }, 'opts.attempts'],
    ['attempts Infinity', { attempts: Number.POSITIVE_INFINITY }, 'opts.attempts'],
    ['priority 1001', { priority: 1001 }, 'opts.priority'],
    ['priority -1001', { priority: -1001 }, 'opts.priority'],
    ['priority 0.5', { priority: 0.5 }, 'opts.priority'],
    ['priority NaN', { priority: Number.NaN }, 'opts.priority'],
    ['leaseMs 0', { leaseMs: 0 }, 'opts.leaseMs'],
    ['leaseMs 9', { leaseMs: 9 }, 'opts.leaseMs'],
    ['leaseMs -5', { leaseMs: -5 }, 'opts.leaseMs'],
    ['leaseMs 10.5', { leaseMs: 10.5 }, 'opts.leaseMs'],
    ['leaseMs Infinity', { leaseMs: Number.POSITIVE_INFINITY }, 'opts.leaseMs'],
    ['runAt NaN', { runAt: Number.NaN }, 'opts.runAt'],
    ['runAt invalid Date', { runAt: new Date('nope') }, 'opts.runAt'],
    ['runAt -1', { runAt: -1 }, 'opts.runAt'],
    ['runAt 1.5', { runAt: 1.5 }, 'opts.runAt'],
    ['delayMs and runAt', { delayMs: 1, runAt: Date.now() }, 'opts'],
    ['jobId empty', { jobId: '' }, 'opts.jobId'],
    ['jobId 257 chars', { jobId: 'j'.repeat(257) }, 'opts.jobId'],
    ['jobId with a newline', { jobId: 'a\nb' }, 'opts.jobId'],
    ['jobId a number', { jobId: 42 }, 'opts.jobId'],
    ['jobId "." (a URL dot segment)', { jobId: '.' }, 'opts.jobId'],
    ['jobId ".." (a URL dot segment)', { jobId: '..' }, 'opts.jobId'],
    ['name a number', { name: 42 }, 'opts.name'],
    ['name with a control char', { name: 'a\u0001' }, 'opts.name'],
    ['name 129 chars', { name: 'n'.repeat(129) }, 'opts.name'],
    ['name with a lone surrogate (not valid UTF-16)', { name: 'bad \ud800 name' }, 'opts.name'],
    ['backoff type', { backoff: { type: 'linear', delayMs: 10 } }, 'opts.backoff.type'],
    ['backoff delayMs -1', { backoff: { type: 'fixed', delayMs: -1 } }, 'opts.backoff.delayMs'],
    ['backoff jitter 2', { backoff: { type: 'fixed', delayMs: 1, jitter: 2 } }, 'opts.backoff.jitter'],
    ['backoff unknown key', { backoff: { type: 'fixed', delayMs: 1, factor: 2 } }, 'opts.backoff'],
    ['keepCompletedMs -1', { keepCompletedMs: -1 }, 'opts.keepCompletedMs'],
    ['keepCompleted.count -1', { keepCompleted: { count: -1 } }, 'opts.keepCompleted.count'],
    ['keepCompleted.count 0', { keepCompleted: { count: 0 } }, 'opts.keepCompleted.count'],
    ['keepCompleted.count 1.5', { keepCompleted: { count: 1.5 } }, 'opts.keepCompleted.count'],
    ['keepCompleted.ageMs -1', { keepCompleted: { ageMs: -1 } }, 'opts.keepCompleted.ageMs'],
    ['keepCompleted.ageMs past MAX_MS', { keepCompleted: { ageMs: 2 ** 41 + 1 } }, 'opts.keepCompleted.ageMs'],
    ['keepCompleted unknown key', { keepCompleted: { age: 1000 } }, 'opts.keepCompleted'],
    ['keepCompleted a number', { keepCompleted: 100 }, 'opts.keepCompleted'],
    ['keepDead.count "10"', { keepDead: { count: '10' } }, 'opts.keepDead.count'],
    ['keepDead.ageMs NaN', { keepDead: { ageMs: Number.NaN } }, 'opts.keepDead.ageMs'],
    ['keepDead unknown key', { keepDead: { count: 1, removeOnFail: true } }, 'opts.keepDead'],
    ['keepDead true', { keepDead: true }, 'opts.keepDead'],
    ['dedupWindowMs 1.5', { dedupWindowMs: 1.5 }, 'opts.dedupWindowMs'],
    ['unknown key', { retries: 3 }, 'opts'],
    ['misspelt key', { jobID: 'x' }, 'opts'],
  ];

  test.each(cases)('add with %s is refused', async (_label, opts, field) => {
    const q = newQueue('q');
    await expectInvalid(() => q.add('x', opts as never), field);
  });

  test.each([
    ['a string', 'x'],
    ['a number', 5],
    ['an array', []],
  ])('add options that are %s are refused', async (_label, opts) => {
    const q = newQueue('q');
    await expectInvalid(() => q.add('x', opts as never), 'opts');
  });

  test('boundaries are accepted: priority ±1000, attempts 1, delayMs 0, keepCompletedMs 0, leaseMs 10, keep counts 1, ages 0 and MAX_MS', async () => {
    const q = newQueue('q');
    for (const opts of [
      { priority: 1000 }, { priority: -1000 }, { attempts: 1 }, { delayMs: 0 }, { keepCompletedMs: 0 }, { leaseMs: 10 },
      { keepCompleted: { count: 1, ageMs: 0 } }, { keepDead: { count: 1, ageMs: 2 ** 41 } }, { keepCompletedMs: 5, keepCompleted: { count: 1 } },
    ]) {
      expect((await q.add('x', opts)).created).toBe(true);
    }
  });

  test('keepCompletedMs and keepCompleted.ageMs are one rule: giving both is refused, in job options and in defaults', async () => {
    const q = newQueue('q');
    const both = { keepCompletedMs: 1000, keepCompleted: { ageMs: 1000 } };
    for (const err of [await expectInvalid(() => q.add('x', both), 'opts'), await expectInvalid(() => newQueue('q', { defaults: both }), 'defaults')]) {
      expect(err.message).toMatch(/give keepCompletedMs or keepCompleted\.ageMs, not both/);
    }
  });

  test('addBulk: one bad job refuses the whole batch and names it', async () => {
    const q = newQueue('q');
    await expectInvalid(
      () => q.addBulk([{ data: 'ok' }, { data: 'ok' }, { data: 'bad', opts: { delayMs: -1 } }]),
      'jobs[2].opts.delayMs',
    );
    await expectInvalid(() => q.addBulk([{ data: 'ok' }, { data: 'bad', opts: { keepDead: { count: 0 } } }]), 'jobs[1].opts.keepDead.count');
    await expectInvalid(() => q.addBulk([{ data: 'ok' }, { data: () => 1 } as never]), 'jobs[1].data');
    await expectInvalid(() => q.addBulk([{ data: 'ok', opt: {} } as never]), 'jobs[0]');
    await expectInvalid(() => q.addBulk([null as never]), 'jobs[0]');
  });

  test("ids '.' and '..' are refused in bulk adds and flows too; ids that only look like them are kept as given", async () => {
    const q = newQueue('q');
    const dot = await expectInvalid(() => q.addBulk([{ data: 'ok' }, { data: 'x', opts: { jobId: '..' } }]), 'jobs[1].opts.jobId');
    expect(dot.message).toBe("jobs[1].opts.jobId: must not be '..' (URLs drop it as a dot segment)");
    await expectInvalid(() => q.addFlow({ data: 'parent', children: [{ data: 'child', opts: { jobId: '.' } }] }), 'flow.children[0].opts.jobId');
    await expectInvalid(() => q.addFlow({ data: 'parent', opts: { jobId: '..' } }), 'flow.opts.jobId');
    for (const id of ['...', '.a', 'a.', '%2e', '%2E%2E', './x']) {
      expect(await q.add(id, { jobId: id })).toEqual({ id, created: true });
      expect((await q.getJob(id))?.data).toBe(id);
    }
    // reads of an id still take them (a job added before the rule came)
    expect(await q.getJob('.')).toBeNull();
  });
});

describe('lease, settle and other call options', () => {
  test.each([
    ['unknown key', { block: 100 }, 'lease options'],
    ['count 0', { count: 0 }, 'count'],
    ['count 1001', { count: 1001 }, 'count'],
    ['count 1.5', { count: 1.5 }, 'count'],
    ['leaseMs 0', { leaseMs: 0 }, 'leaseMs'],
    ['leaseMs 9', { leaseMs: 9 }, 'leaseMs'],
    ['leaseMs NaN', { leaseMs: Number.NaN }, 'leaseMs'],
    ['leaseMs -1', { leaseMs: -1 }, 'leaseMs'],
    ['blockMs -1', { blockMs: -1 }, 'blockMs'],
    ['blockMs 0.5', { blockMs: 0.5 }, 'blockMs'],
    ['blockMs Infinity', { blockMs: Number.POSITIVE_INFINITY }, 'blockMs'],
  ])('lease with %s is refused', async (_label, opts, field) => {
    const q = newQueue('q');
    await expectInvalid(() => q.lease(opts as never), field);
  });

  test('nack / requeue / listDead / waitForResult options are checked', async () => {
    const q = newQueue('q');
    const fake = { job: { id: 'x', attempt: 1, policy: { backoff: { type: 'fixed', delayMs: 0 } } }, token: 't', deadline: 0 } as never;
    await expectInvalid(() => q.nack(fake, { delay: 1 } as never), 'nack options');
    await expectInvalid(() => q.nack(fake, { delayMs: -1 }), 'delayMs');
    await expectInvalid(() => q.requeue(fake, { delayMs: 1.5 }), 'delayMs');
    await expectInvalid(() => q.requeue(fake, { later: true } as never), 'requeue options');
    await expectInvalid(() => q.listDead({ limit: 0 }), 'limit');
    await expectInvalid(() => q.retryDead({ limit: -1 }), 'limit');
    await expectInvalid(() => q.waitForResult('x', { timeoutMs: 0 }), 'timeoutMs');
  });

  test('Worker options are checked before anything connects', async () => {
    const q = newQueue('q');
    const handler = async () => undefined;
    await expectInvalid(() => new Worker(q, handler, { threads: 2 } as never), 'worker options');
    await expectInvalid(() => new Worker(q, handler, { concurrency: 0 }), 'concurrency');
    await expectInvalid(() => new Worker(q, handler, { concurrency: 1.5 }), 'concurrency');
    await expectInvalid(() => new Worker(q, handler, { leaseMs: 5 }), 'leaseMs');
    await expectInvalid(() => new Worker(q, handler, { blockMs: -1 }), 'blockMs');
  });

  test.each([
    ['addBulk of a non-array', (q: Queue) => q.addBulk('x' as never), /jobs/],
    ["getJob('')", (q: Queue) => q.getJob(''), /id/],
    ["retryDead([''])", (q: Queue) => q.retryDead(['']), /ids?\[0\]/],
    ['purgeDead([42])', (q: Queue) => q.purgeDead([42 as never]), /ids?\[0\]/],
    ['a Worker handler that is not a function', (q: Queue) => new Worker(q, 'not a function' as never), /handler/],
  ])('%s gets ValidationError (not a bare RelqError or TypeError)', async (_label, call, field) => {
    const q = newQueue('q');
    await expectInvalid(() => call(q), field);
  });
});

describe('payloads', () => {
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;

  test.each([
    ['a function', () => 1, 'data'],
    ['a BigInt', 10n, 'data'],
    ['a nested BigInt', { n: { big: 1n } }, 'data.n.big'],
    ['a cycle', cyclic, 'data.self'],
    ['undefined', undefined, 'data'],
    ['NaN', Number.NaN, 'data'],
    ['Infinity inside', { x: Number.POSITIVE_INFINITY }, 'data.x'],
    ['a Map', new Map([['a', 1]]), 'data'],
    ['a Set', new Set([1]), 'data'],
    ['a symbol', Symbol('s'), 'data'],
    ['a class instance', new Point(1, 2), 'data'],
    ['a function in an array', [1, () => 2], 'data[1]'],
  ])('data with %s is refused', async (_label, data, field) => {
    const q = newQueue('q');
    await expectInvalid(() => q.add(data), field);
  });

  test('deep nesting: plain data 100 levels down is accepted; a bad value or a cycle that deep is refused with its path', async () => {
    const q = newQueue('q');
    const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { d: nest(depth - 1, leaf) });
    const { id } = await q.add(nest(100, [1, 'x', null]));
    expect((await q.getJob(id))!.data).toEqual(nest(100, [1, 'x', null]));
    const deepPath = `data${'.d'.repeat(100)}`;
    await expectInvalid(() => q.add(nest(100, 1n)), deepPath);
    const loop: Record<string, unknown> = {};
    loop.again = nest(60, loop);
    await expectInvalid(() => q.add(loop), `data.again${'.d'.repeat(60)}`);
  });

  test('undefined follows JSON.stringify: dropped from objects, null in arrays and holes', async () => {
    const q = newQueue('q');
    // eslint-disable-next-line no-sparse-arrays
    const data = { a: undefined, keep: 1, list: [1, undefined, , 4], nested: { gone: undefined, viaToJSON: { toJSON: () => undefined } } };
    const { id } = await q.add(data);
    expect((await q.getJob(id))!.data).toEqual(JSON.parse(JSON.stringify(data)));
    expect((await q.getJob(id))!.data).toEqual({ keep: 1, list: [1, null, null, 4], nested: {} });
  });

  test('what JSON.stringify throws on, or has no JSON for, is a ValidationError (toJSON to a BigInt or undefined, 100k levels deep)', async () => {
    const q = newQueue('q');
    await expectInvalid(() => q.add({ toJSON: () => 1n }), 'data');
    await expectInvalid(() => q.add({ toJSON: () => undefined }), 'data');
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const err = await expectInvalid(() => q.add(deep), /^data(\[0\])+$/);
    expect((err as Error).message).toMatch(/nested deeper than 1000 levels/);
  });

  test('Dates and null-prototype objects are fine', async () => {
    const q = newQueue('q');
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    const { id } = await q.add({ when: new Date(0), bare });
    expect((await q.getJob(id))!.data).toEqual({ when: '1970-01-01T00:00:00.000Z', bare: { a: 1 } });
  });

  test('maxPayloadBytes 1024: 1024 bytes of JSON pass, 1025 are refused (bytes, not characters)', async () => {
    const q = newQueue('q', { maxPayloadBytes: 1024 });
    expect((await q.add('x'.repeat(1022))).created).toBe(true); // "…" = 1024 bytes
    const err = (await expectInvalid(() => q.add('x'.repeat(1023)), 'data', PayloadTooLargeError)) as PayloadTooLargeError;
    expect(err.bytes).toBe(1025);
    expect(err.limit).toBe(1024);
    expect(err.message).toMatch(/1025/);
    expect((await q.add('é'.repeat(511))).created).toBe(true); // 2 + 1022
    await expectInvalid(() => q.add('é'.repeat(512)), 'data', PayloadTooLargeError);
    await expectInvalid(() => q.addBulk([{ data: 'ok' }, { data: 'y'.repeat(2000) }]), 'jobs[1].data', PayloadTooLargeError);
  });

  test('the default limit is 1 MiB: exactly 1 MiB passes, 1 MiB + 1 is refused', async () => {
    const q = newQueue('q');
    const mib = 1024 * 1024;
    expect((await q.add('x'.repeat(mib - 2))).created).toBe(true);
    const err = (await expectInvalid(() => q.add('x'.repeat(mib - 1)), 'data', PayloadTooLargeError)) as PayloadTooLargeError;
    expect(err).toMatchObject({ bytes: mib + 1, limit: mib });
  });

  test('a result over the limit is refused and the lease stays valid', async () => {
    const q = newQueue('q', { maxPayloadBytes: 100 });
    const { id } = await q.add('x');
    const [l] = await q.lease();
    await expectInvalid(() => q.ack(l!, 'r'.repeat(200)), 'result', PayloadTooLargeError);
    await expectInvalid(() => q.ack(l!, (() => 1) as never), 'result');
    expect((await q.getJob(id))!.state).toBe('working');
    expect(await q.ack(l!, 'small')).toBe(true);
  });

  test('a __proto__ key (from JSON.parse) round-trips as own data and pollutes nothing', async () => {
    const q = newQueue('q');
    const data = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted2":"yes"}},"a":1}') as Record<string, unknown>;
    const { id } = await q.add(data, { name: '__proto__' });
    const check = (d: Record<string, unknown>) => {
      expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(d, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(d, '__proto__')!.value).toEqual({ polluted: 'yes' });
      expect(d.a).toBe(1);
      expect((d as { polluted?: unknown }).polluted).toBeUndefined();
    };
    check((await q.getJob(id))!.data as Record<string, unknown>);
    const [l] = await q.lease();
    check(l!.job.data as Record<string, unknown>);
    expect(l!.job.name).toBe('__proto__');
    await q.ack(l!, data);
    check((await q.getJob(id))!.result as Record<string, unknown>);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted2?: unknown }).polluted2).toBeUndefined();
    const { id: id2 } = await q.add(1, { jobId: '__proto__' });
    expect(id2).toBe('__proto__');
    expect((await q.getJob('__proto__'))!.data).toBe(1);
  });
});
