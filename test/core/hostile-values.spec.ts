/**
 * Whatever a handler throws or returns, however hostile to read (throwing getters, revoked
 * Proxies, Symbols, a toString that throws, huge or circular values), its attempt ends with
 * a readable description, the worker lives on, its slot is free and close() returns.
 */
import { BatchWorker, UnreadableValueError, Worker, type WorkerEvent } from '../../lib/index.js';
import { useRedis, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** A Proxy every trap of which throws (instanceof included). */
function trapProxy(): object {
  const boom = () => {
    throw new Error('trap');
  };
  return new Proxy({}, { get: boom, getPrototypeOf: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
}

function messageThrows(): Error {
  const e = new Error('x');
  Object.defineProperty(e, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  return e;
}

function nameThrowsRevoked(): Error {
  const e = new Error('x');
  Object.defineProperty(e, 'name', {
    get() {
      throw revokedProxy();
    },
  });
  return e;
}

function symbolMessage(): Error {
  const e = new Error('x');
  Object.defineProperty(e, 'message', { value: Symbol('m') });
  return e;
}

const toStringThrows = {
  toString() {
    throw new Error('toString');
  },
  toJSON() {
    throw new Error('toJSON');
  },
};

function circular(): object {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

/** What each hostile thrown value must be stored as (a pattern of the job's lastError). */
const THROWN: Array<[string, () => unknown, RegExp]> = [
  ['an Error whose message getter throws', messageThrows, /^UnreadableValueError: a handler threw an unreadable object/],
  ['an Error whose name getter throws a revoked Proxy', nameThrowsRevoked, /^UnreadableValueError: /],
  ['an Error whose message is a Symbol', symbolMessage, /^Error: Symbol\(m\)$/],
  ['a revoked Proxy', revokedProxy, /^UnreadableValueError: a handler threw an unreadable object/],
  ['a Proxy whose every trap throws', trapProxy, /^UnreadableValueError: /],
  ['a Symbol', () => Symbol('s'), /^Symbol\(s\)$/],
  ['null', () => null, /^null$/],
  ['undefined', () => undefined, /^failed$/],
  ['an object whose toString and toJSON throw', () => toStringThrows, /^\[object Object\]$/],
  ['a circular object', circular, /^\[object Object\]$/],
  ['a huge string', () => 'x'.repeat(1_000_000), /^x{4096}…$/],
  ['a BigInt', () => 10n ** 30n, /^1000000000000000000000000000000$/],
];

/** Hostile values a handler returns: each fails its attempt with a readable error. */
const RETURNED: Array<[string, () => unknown, RegExp]> = [
  ['a revoked Proxy', revokedProxy, /^(TypeError|ValidationError): /],
  ['a Proxy whose every trap throws', trapProxy, /^(TypeError|ValidationError|Error): /],
  ['an object with a throwing getter', () => ({ get x() { throw revokedProxy(); } }), /^(UnreadableValueError|ValidationError): /],
  ['a Symbol', () => Symbol('r'), /^ValidationError: result: /],
  ['a circular object', circular, /^ValidationError: result/],
  ['a BigInt', () => 1n, /^ValidationError: result/],
  ['a result over maxPayloadBytes', () => 'y'.repeat(2_000_000), /^PayloadTooLargeError: result: is \d+ bytes of JSON, over the limit/],
];

/** Collects unhandled rejections and uncaught exceptions while a test runs. */
function watchProcess(): { problems: unknown[]; stop: () => void } {
  const problems: unknown[] = [];
  const onProblem = (e: unknown) => problems.push(e);
  process.on('unhandledRejection', onProblem);
  process.on('uncaughtException', onProblem);
  return {
    problems,
    stop: () => {
      process.off('unhandledRejection', onProblem);
      process.off('uncaughtException', onProblem);
    },
  };
}

describe('Worker', () => {
  test.each([...THROWN.map(([what, make, stored]) => ['throws', what, make, stored] as const), ...RETURNED.map(([what, make, stored]) => ['returns', what, make, stored] as const)])(
    'a handler that %s %s: the attempt is dead with a readable error, the worker goes on',
    async (verb, _what, make, stored) => {
      const watch = watchProcess();
      try {
        const q = res.queue('hostile');
        const events: Array<WorkerEvent<unknown, unknown>> = [];
        const w = res.worker(
          new Worker(
            q,
            async (job) => {
              if (job.id !== 'bad') return 'fine';
              if (verb === 'throws') throw make();
              return make();
            },
            { concurrency: 1, leaseMs: 2000 },
          ),
        );
        w.events.subscribe((e) => events.push(e));
        await q.add({}, { jobId: 'bad', attempts: 1 });
        await q.add({}, { jobId: 'next' });
        expect(await q.waitForResult('next', { timeoutMs: 5000 })).toBe('fine');
        const bad = await q.getJob('bad');
        expect(bad?.state).toBe('dead');
        expect(bad?.lastError).toMatch(stored);
        const dead = events.find((e) => e.type === 'dead');
        expect(dead).toBeDefined();
        const error = (dead as { error: unknown }).error;
        if (stored.source.includes('UnreadableValueError')) expect(error).toBeInstanceOf(UnreadableValueError);
        expect(w.inFlight).toBe(0);
        await within(w.close(), 3000, 'close()');
        expect(watch.problems).toEqual([]);
      } finally {
        watch.stop();
      }
    },
  );
});

describe('BatchWorker', () => {
  test('a batch handler that throws a revoked Proxy, then one whose outcomes throw when read', async () => {
    const watch = watchProcess();
    try {
      const q = res.queue('hostile-batch');
      let batch = 0;
      const w = res.worker(
        new BatchWorker(
          q,
          async (jobs) => {
            batch += 1;
            if (batch === 1) throw revokedProxy();
            if (batch === 2) {
              return jobs.map((_, i) =>
                i === 0
                  ? { ok: true as const, result: 'kept' }
                  : ({
                      get ok(): true {
                        throw revokedProxy();
                      },
                    } as { ok: true }),
              );
            }
            return undefined;
          },
          { size: 2, concurrency: 1, leaseMs: 2000 },
        ),
      );
      await q.addBulk(['a1', 'a2'].map((jobId) => ({ data: {}, opts: { jobId, attempts: 1 } })));
      await waitUntil(async () => (await q.counts()).dead === 2, 'first batch dead', 5000);
      expect((await q.getJob('a1'))?.lastError).toMatch(/^UnreadableValueError: /);
      await q.addBulk(['b1', 'b2'].map((jobId) => ({ data: {}, opts: { jobId, attempts: 1 } })));
      await waitUntil(async () => (await q.counts()).dead === 3, 'second batch settled', 5000);
      expect(await q.getJob('b1')).toMatchObject({ state: 'completed', result: 'kept' });
      expect((await q.getJob('b2'))?.lastError).toMatch(/^UnreadableValueError: /);
      await q.add({}, { jobId: 'c' });
      await waitUntil(async () => (await q.getJob('c'))?.state === 'completed', 'the worker goes on', 5000);
      expect(w.inFlight).toBe(0);
      await within(w.close(), 3000, 'close()');
      expect(watch.problems).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
