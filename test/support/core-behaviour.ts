/**
 * The engine's core behaviour, as black-box tests of the public API, run against any Redis
 * topology or security set-up (TLS, an ACL user, Sentinel): add, lease, ack, nack, sweep,
 * events, a bounded queue, fair groups and the batch worker. A spec calls
 * `describeCoreBehaviour(title, () => ({ connection, prefix }))` inside its own set-up.
 */
import {
  BatchWorker,
  Queue,
  QueueFullError,
  Worker,
  type ConnectionInput,
  type Job,
  type QueueEvent,
  type QueueOptions,
} from '../../lib/index.js';
import { uniquePrefix } from './redis.js';
import { waitUntil } from './wait.js';

export interface CoreTarget {
  /** A fresh connection input each call (relq opens and closes it). */
  connection(): ConnectionInput;
  /** Key prefix the connection may use (an ACL user's). Default: a unique one per test. */
  prefix?: string;
}

export function describeCoreBehaviour(title: string, target: () => CoreTarget): void {
  describe(`core behaviour: ${title}`, () => {
    const closers: Array<() => Promise<unknown>> = [];
    let n = 0;
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    });

    function queue<D = unknown, R = unknown>(opts: QueueOptions = {}): Queue<D, R> {
      const t = target();
      n += 1;
      // An ACL user's prefix is fixed: a unique queue name keeps tests apart instead.
      const q = new Queue<D, R>(`core-${uniquePrefix()}-${n}`, { connection: t.connection(), prefix: t.prefix ?? uniquePrefix(), ...opts });
      closers.push(() => q.close());
      return q;
    }

    function twin<D, R>(q: Queue<D, R>, opts: QueueOptions = {}): Queue<D, R> {
      const t = target();
      const other = new Queue<D, R>(q.name, { connection: t.connection(), prefix: q.prefix, ...opts });
      closers.push(() => other.close());
      return other;
    }

    test('add, lease, ack and nack; getJob and counts read the result', async () => {
      const q = queue<{ n: number }, string>();
      const a = await q.add({ n: 1 });
      const b = await q.add({ n: 2 }, { attempts: 2, backoff: 0 });
      const leases = await q.lease({ count: 2 });
      expect(leases.map((l) => l.job.data.n)).toEqual([1, 2]);
      expect(await q.ack(leases[0]!, 'done')).toBe(true);
      expect(await q.ack(leases[0]!, 'again')).toBe(false);
      expect(await q.nack(leases[1]!, { error: new Error('boom') })).toBe(true);
      expect(await q.getJob(a.id)).toMatchObject({ state: 'completed', result: 'done' });
      expect(await q.getJob(b.id)).toMatchObject({ state: 'pending', failures: 1, lastError: 'Error: boom' });
      const [retry] = await q.lease();
      expect(retry!.job.attempt).toBe(2);
      expect(await q.touch(retry!)).toBe(true);
      expect(await q.reject(retry!, 'no')).toBe(true);
      expect(await q.counts()).toMatchObject({ pending: 0, working: 0, completed: 1, dead: 1 });
      expect((await q.listDead()).map((d) => d.id)).toEqual([b.id]);
    });

    test('sweep returns an expired lease; the stale lease can no longer ack', async () => {
      const q = queue<string>();
      const { id } = await q.add('x', { attempts: 3 });
      const [stale] = await q.lease({ leaseMs: 30 });
      await waitUntil(async () => (await q.sweep()).stalled === 1, 'the lease to expire and be swept', 10_000);
      const [fresh] = await q.lease();
      expect(fresh!.job.id).toBe(id);
      expect(await q.ack(stale!)).toBe(false);
      expect(await q.ack(fresh!)).toBe(true);
    });

    test('a Worker processes jobs and waitForResult sees them complete through events', async () => {
      const q = queue<number, number>();
      const events: QueueEvent[] = [];
      const sub = q.events().subscribe((e) => events.push(e));
      closers.push(async () => sub.unsubscribe());
      // Pub/sub keeps nothing for a subscriber that is not connected yet: the subscription is
      // live once an event of a probe job comes through it (lease and ack publish by themselves).
      let probes = 0;
      await waitUntil(
        async () => {
          await q.add(0, { jobId: `probe-${++probes}` });
          const [l] = await q.lease();
          if (l) await q.ack(l, 0);
          return events.length > 0;
        },
        'the events subscription to be live',
        10_000,
        50,
      );
      const w = new Worker(twin(q), async (job: Job<number>) => job.data * 2, { concurrency: 4, blockMs: 1000 });
      closers.push(() => w.close({ drainTimeoutMs: 0 }));
      const { id } = await q.add(21);
      expect(await q.waitForResult(id, { timeoutMs: 10_000 })).toBe(42);
      await waitUntil(() => events.some((e) => e.type === 'completed' && e.id === id), 'the completed event', 10_000);
      const ids = await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ data: i })));
      const results = await Promise.all(ids.map((r) => q.waitForResult(r.id, { timeoutMs: 10_000 })));
      expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
    });

    test('a bounded queue makes add() wait until a slot frees', async () => {
      const q = queue<number>({ bound: 2 });
      await q.add(1);
      await q.add(2);
      await expect(q.tryAdd(3)).rejects.toBeInstanceOf(QueueFullError);
      let added = false;
      const waiting = q.add(3).then((r) => ((added = true), r));
      await waitUntil(async () => (await q.queueState()).waitingProducers === 1, 'the add to wait for room', 10_000);
      expect(added).toBe(false);
      const [l] = await twin(q).lease();
      expect(await q.ack(l!)).toBe(true);
      expect((await waiting).created).toBe(true);
    });

    test('fair groups take turns', async () => {
      const q = queue<string>();
      await q.addBulk(['a1', 'a2', 'a3'].map((data) => ({ data, opts: { group: 'a' } })));
      await q.addBulk(['b1', 'b2'].map((data) => ({ data, opts: { group: 'b' } })));
      const leased = await q.lease({ count: 5 });
      expect(leased.map((l) => l.job.data)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
      expect(await q.ackBatch(leased)).toEqual([true, true, true, true, true]);
    });

    test('a BatchWorker settles whole batches', async () => {
      const q = queue<number, number>();
      const sizes: number[] = [];
      const bw = new BatchWorker<number, number>(
        twin(q),
        (jobs) => {
          sizes.push(jobs.length);
          return jobs.map((j) => ({ ok: true as const, result: j.data + 1 }));
        },
        { size: 10, waitMs: 50, blockMs: 1000 },
      );
      closers.push(() => bw.close({ drainTimeoutMs: 0 }));
      const ids = await q.addBulk(Array.from({ length: 25 }, (_, i) => ({ data: i })));
      await waitUntil(async () => (await q.counts()).completed === 25, '25 completed', 10_000);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(25);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
      expect((await q.getJob(ids[7]!.id))!.result).toBe(8);
    });
  });
}
