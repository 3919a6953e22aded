import { JobFailedError, TimeoutError, Worker, type JobState, type QueueEvent } from '../../lib/index.js';
import { useRedis, eventsReady, sleep, untilRedisTime, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

const fixed0 = { type: 'fixed' as const, delayMs: 0, jitter: 0 };

describe('events()', () => {
  test('added / leased / failed / retried / completed / dead / stalled, seen from another Queue instance', async () => {
    const q = res.queue<string>('ev');
    const watcher = res.twin<string>(q);
    const obs = res.client();
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(obs, q);
      const a = await q.add('a', { attempts: 3, backoff: fixed0 });
      await q.nack((await q.lease())[0]!, { error: 'boom' });
      await q.ack((await q.lease())[0]!);
      const b = await q.add('b', { attempts: 1 });
      await q.nack((await q.lease())[0]!, { error: 'fatal' });
      const c = await q.add('c', { attempts: 3 });
      const [lc] = await q.lease({ leaseMs: 50 });
      await untilRedisTime(obs, lc!.deadline, 'the lease of c to run out');
      await q.sweep();

      const seq = (id: string) => got.filter((e) => e.id === id).map((e) => e.type);
      await waitUntil(() => seq(c.id).includes('retried'), 'events of c');
      expect(seq(a.id)).toEqual(['added', 'leased', 'failed', 'retried', 'leased', 'completed']);
      expect(seq(b.id)).toEqual(['added', 'leased', 'failed', 'dead']);
      expect(seq(c.id)).toEqual(['added', 'leased', 'stalled', 'retried']);
      expect(got.every((e) => e.queue === 'ev')).toBe(true);
      expect(got.find((e) => e.id === a.id && e.type === 'failed')).toMatchObject({ attempt: 1, error: 'boom' });
      expect(got.filter((e) => e.id === a.id && e.type === 'leased').map((e) => e.attempt)).toEqual([1, 2]);
      expect(got.find((e) => e.id === b.id && e.type === 'dead')).toMatchObject({ error: 'fatal' });
      expect(got.find((e) => e.id === c.id && e.type === 'stalled')).toMatchObject({ attempt: 1, error: 'lease expired' });
    } finally {
      sub.unsubscribe();
    }
  });

  test('a completed event carries a result up to 16 KiB of JSON; a larger one is left out and read with getJob', async () => {
    const q = res.queue<string, unknown>('ev-result');
    const watcher = res.twin<string, unknown>(q);
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      const small = { ok: 'x'.repeat(16_000) }; // 16,011 bytes of JSON
      const large = { ok: 'x'.repeat(17_000) };
      const s = await q.add('small');
      const l = await q.add('large');
      const n = await q.add('none');
      const leases = await q.lease({ count: 3 });
      const byId = new Map(leases.map((x) => [x.job.id, x]));
      // one call settles all three: their events go out as one message
      await q.ackBatch([
        { lease: byId.get(s.id)!, result: small },
        { lease: byId.get(l.id)!, result: large },
        { lease: byId.get(n.id)! },
      ]);
      const completed = (id: string) => got.find((e) => e.id === id && e.type === 'completed');
      await waitUntil(() => [s.id, l.id, n.id].every((id) => completed(id) !== undefined), 'the completed events');
      expect(completed(s.id)!.result).toEqual(small);
      expect(completed(s.id)!.resultOmitted).toBeUndefined();
      expect(completed(l.id)!.result).toBeUndefined();
      expect(completed(l.id)!.resultOmitted).toBe(true);
      expect((await q.getJob(l.id))!.result).toEqual(large);
      expect(completed(n.id)).not.toHaveProperty('result');
      expect(completed(n.id)!.resultOmitted).toBeUndefined();
    } finally {
      sub.unsubscribe();
    }
  });

  test('the completed events of one call carry 256 KiB of results in all; past it each result is left out', async () => {
    const q = res.queue<string, unknown>('ev-results');
    const watcher = res.twin<string, unknown>(q);
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      const result = { ok: 'x'.repeat(15_000) }; // 15,011 bytes of JSON: 17 fit in 262,144
      for (let i = 0; i < 20; i++) await q.add(`j${i}`);
      const leases = await q.lease({ count: 20 });
      expect(leases).toHaveLength(20);
      await q.ackBatch(leases.map((lease) => ({ lease, result }))); // one call, one message
      await waitUntil(() => got.filter((e) => e.type === 'completed').length === 20, 'the completed events');
      const completed = got.filter((e) => e.type === 'completed');
      expect(completed.slice(0, 17).every((e) => e.resultOmitted === undefined && JSON.stringify(e.result) === JSON.stringify(result))).toBe(true);
      expect(completed.slice(17).every((e) => e.resultOmitted === true && e.result === undefined)).toBe(true);
      expect((await q.getJob(completed[19]!.id!))!.result).toEqual(result);
    } finally {
      sub.unsubscribe();
    }
  });

  test('a requeue with a delay says when the job is due (runAt)', async () => {
    const q = res.queue<string>('ev-requeue');
    const watcher = res.twin<string>(q);
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      const j = await q.add('j');
      const [l] = await q.lease({ count: 1 });
      await q.requeue(l!, { delayMs: 60_000, reason: 'later' });
      await waitUntil(() => got.some((e) => e.type === 'retried'), 'the retried event');
      const retried = got.find((e) => e.type === 'retried')!;
      expect(retried).toMatchObject({ id: j.id, reason: 'later', delayMs: 60_000 });
      expect(retried.runAt).toBe((await q.getJob(j.id))!.runAt);
    } finally {
      sub.unsubscribe();
    }
  });

  test('promoted, paused, resumed and removed', async () => {
    const q = res.queue<string>();
    const watcher = res.twin<string>(q);
    const obs = res.client();
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(obs, q);
      const d = await q.add('d', { delayMs: 30 });
      await untilRedisTime(obs, (await q.getJob(d.id))!.runAt!, 'd to be due');
      await q.sweep();
      await q.pause();
      await q.resume();
      const r = await q.add('r', { attempts: 1 });
      const [l] = await q.lease({ count: 5 });
      await q.reject(l!, 'x');
      await q.purgeDead([l!.job.id]);
      await waitUntil(() => got.some((e) => e.type === 'removed'), 'removed event');
      const types = got.map((e) => e.type);
      expect(got.find((e) => e.type === 'promoted')!.id).toBe(d.id);
      expect(types).toContain('paused');
      expect(types).toContain('resumed');
      expect(types.indexOf('paused')).toBeLessThan(types.indexOf('resumed'));
      expect(got.find((e) => e.type === 'removed')!.id).toBe(l!.job.id);
      expect([d.id, r.id]).toContain(l!.job.id);
    } finally {
      sub.unsubscribe();
    }
  });

  test("'added' carries the job's name (none for a job without one): add, addBulk, delayed, flows, scheduler jobs", async () => {
    const q = res.queue<string>();
    const got: QueueEvent[] = [];
    const sub = res.twin<string>(q).events().subscribe((e) => got.push(e));
    try {
      await eventsReady(res.client(), q);
      await q.add('a', { jobId: 'a', name: 'email "welcome"' });
      await q.add('b', { jobId: 'b' });
      await q.addBulk([{ data: 'c', opts: { jobId: 'c', name: 'sms', delayMs: 60_000 } }, { data: 'd', opts: { jobId: 'd', priority: 2, name: 'é' } }]);
      await q.addFlow({ data: 'p', opts: { jobId: 'p', name: 'report' }, children: [{ data: 'k', opts: { jobId: 'k', name: 'page' } }] });
      await q.upsertScheduler('nightly', { everyMs: 60_000 }, { data: 's', opts: { name: 'digest' } });
      await waitUntil(() => got.filter((e) => e.type === 'added').length === 7, 'seven added events');
      const names = Object.fromEntries(got.filter((e) => e.type === 'added').map((e) => [e.id!.startsWith('repeat:') ? 'scheduled' : e.id, e.name]));
      expect(names).toStrictEqual({ a: 'email "welcome"', b: undefined, c: 'sms', d: 'é', p: 'report', k: 'page', scheduled: 'digest' });
      expect(got.find((e) => e.id === 'b')).not.toHaveProperty('name');
    } finally {
      sub.unsubscribe();
    }
  });

  test('a queue with events: false publishes nothing', async () => {
    const q = res.queue<string>('quiet', { events: false });
    const watcher = res.twin<string>(q);
    const obs = res.client();
    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(obs, q);
      await q.add('x');
      await q.ack((await q.lease())[0]!);
      await watcher.add('marker'); // events on: proves the subscription works
      await waitUntil(() => got.length > 0, 'marker event');
      expect(got.map((e) => e.type)).toEqual(['added']);
    } finally {
      sub.unsubscribe();
    }
  });

  test('the subscription connection closes after the last subscriber leaves', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const s1 = q.events().subscribe();
    const got2: QueueEvent[] = [];
    const s2 = q.events().subscribe((e) => got2.push(e));
    await eventsReady(obs, q);
    s1.unsubscribe();
    await sleep(300); // time for a wrong close to show
    await eventsReady(obs, q); // still one
    // and it still delivers
    const { id } = await q.add('x');
    await q.lease();
    await waitUntil(() => got2.some((e) => e.id === id && e.type === 'leased'), 'an event for the remaining subscriber', 10_000);
    s2.unsubscribe();
    await waitUntil(async () => {
      const r = (await obs.call('PUBSUB', 'SHARDNUMSUB', q.keys.byName.events)) as [string, number];
      return Number(r[1]) === 0;
    }, 'unsubscribe');
  });
});

describe('publishing only while someone listens', () => {
  test('nothing is published without a listener; a new listener gets every later transition at once, and added events within a second', async () => {
    const q = res.queue<string>();
    const watcher = res.twin<string>(q);
    const obs = res.client();
    const published = async () => {
      const info = await obs.info('commandstats');
      return Number(/cmdstat_spublish:calls=(\d+)/.exec(info)?.[1] ?? 0);
    };
    await q.add('warm-up'); // the producer now knows that nobody listens
    await q.ack((await q.lease())[0]!);
    const before = await published();
    await q.add('unheard');
    await q.ack((await q.lease())[0]!);
    expect(await published()).toBe(before);
    expect(await obs.exists(q.keys.byName.listeners)).toBe(0);

    const got: QueueEvent[] = [];
    const sub = watcher.events().subscribe((e) => got.push(e));
    try {
      await eventsReady(obs, q);
      const ttl = await obs.pttl(q.keys.byName.listeners);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
      // The producer's last reading (nobody) may be up to a second old: its adds may go
      // unannounced until then, but leases and settles check the key in the script itself.
      const a = await q.add('a');
      await q.ack((await q.lease())[0]!);
      await waitUntil(() => got.some((e) => e.id === a.id && e.type === 'completed'), 'completed event of a');
      expect(got.filter((e) => e.id === a.id).map((e) => e.type).filter((t) => t !== 'added')).toEqual(['leased', 'completed']);
      await sleep(1100); // the producer's reading is over a second old now
      await q.add('b'); // starts a new reading; its answers come before this add's, on the same connection
      await new Promise((resolve) => setImmediate(resolve));
      const b = await q.add('b');
      await waitUntil(() => got.some((e) => e.id === b.id && e.type === 'added'), 'added event of b');
    } finally {
      sub.unsubscribe();
    }
    // The announcement is left to expire: another process may still be listening.
    await waitUntil(async () => {
      const r = (await obs.call('PUBSUB', 'SHARDNUMSUB', q.keys.byName.events)) as [string, number];
      return Number(r[1]) === 0;
    }, 'unsubscribe');
    expect(await obs.pttl(q.keys.byName.listeners)).toBeGreaterThan(0);
  });

  test('a listener announces itself again when its connection comes back (the key may be gone with the server)', async () => {
    const q = res.queue<string>();
    const obs = res.client();
    const sub = q.events().subscribe();
    try {
      await eventsReady(obs, q);
      await obs.del(q.keys.byName.listeners); // as after a restart without persistence
      await obs.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await waitUntil(async () => (await obs.exists(q.keys.byName.listeners)) === 1, 're-announced', 10_000);
    } finally {
      sub.unsubscribe();
    }
  });
});

describe('watch(id)', () => {
  test('emits states until completed, from another Queue instance', async () => {
    const q = res.queue<string>();
    const watcher = res.twin<string>(q);
    const { id } = await q.add('x');
    const states: Array<JobState | 'gone'> = [];
    let completed = false;
    const sub = watcher.watch(id).subscribe({ next: (s) => states.push(s), complete: () => (completed = true) });
    try {
      await waitUntil(() => states.length === 1, 'initial state');
      const [l] = await q.lease();
      await waitUntil(() => states.length === 2, 'working');
      await q.ack(l!, 'r');
      await waitUntil(() => completed, 'completion');
      expect(states).toEqual(['pending', 'working', 'completed']);
    } finally {
      sub.unsubscribe();
    }
  });

  test('follows retries through delayed and stalled back to pending, ends at dead', async () => {
    const q = res.queue<string>();
    const watcher = res.twin<string>(q);
    const obs = res.client();
    const { id } = await q.add('x', { attempts: 3, backoff: { type: 'fixed', delayMs: 40, jitter: 0 } });
    const states: Array<JobState | 'gone'> = [];
    let completed = false;
    const sub = watcher.watch(id).subscribe({ next: (s) => states.push(s), complete: () => (completed = true) });
    // each transition once the watcher has shown the one before
    const shown = (n: number, what: string) => waitUntil(() => states.length >= n, what, 10_000);
    try {
      await shown(1, 'initial state');
      const [l1] = await q.lease(); // -> working
      await shown(2, 'working');
      await q.nack(l1!, { error: 'e1' }); // -> delayed
      await shown(3, 'delayed');
      await untilRedisTime(obs, (await q.getJob(id))!.runAt!, 'the retry to be due');
      await q.sweep(); // -> pending (promoted)
      await shown(4, 'pending after promotion');
      const [l2] = await q.lease({ leaseMs: 30 }); // -> working
      await shown(5, 'working again');
      await untilRedisTime(obs, l2!.deadline, 'the lease to run out');
      await q.sweep(); // -> pending (stalled)
      await shown(6, 'pending after the stall');
      await q.reject((await q.lease())[0]!, 'done'); // -> working -> dead
      await waitUntil(() => completed, 'completion', 10_000);
      expect(states).toEqual(['pending', 'working', 'delayed', 'pending', 'working', 'pending', 'working', 'dead']);
    } finally {
      sub.unsubscribe();
    }
  });

  test("an unknown id emits 'gone' and completes", async () => {
    const q = res.queue();
    const states: unknown[] = [];
    await new Promise<void>((resolve, reject) => q.watch('missing').subscribe({ next: (s) => states.push(s), complete: resolve, error: reject }));
    expect(states).toEqual(['gone']);
  });
});

describe('waitForResult', () => {
  test('resolves with the result of a job completed by a worker elsewhere', async () => {
    const q = res.queue<number, number>();
    const waiter = res.twin<number, number>(q);
    const obs = res.client();
    const { id } = await q.add(21);
    const p = waiter.waitForResult(id, { timeoutMs: 10_000 });
    await eventsReady(obs, q); // the waiter listens before the job runs
    res.worker(new Worker<number, number>(q, async (job) => job.data * 2, { blockMs: 1000 }));
    await expect(p).resolves.toBe(42);
  });

  test('resolves at once for a job that already completed', async () => {
    const q = res.queue<number, string>();
    const { id } = await q.add(1);
    await q.ack((await q.lease())[0]!, 'done');
    await expect(q.waitForResult(id, { timeoutMs: 1000 })).resolves.toBe('done');
  });

  test('rejects with JobFailedError when the job is dead-lettered', async () => {
    const q = res.queue<number, number>();
    const waiter = res.twin<number, number>(q);
    const obs = res.client();
    const { id } = await q.add(1, { attempts: 1 });
    const p = waiter.waitForResult(id, { timeoutMs: 10_000 });
    p.catch(() => undefined);
    await eventsReady(obs, q); // the waiter listens before the job fails
    await q.nack((await q.lease())[0]!, { error: new Error('kaput') });
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ jobId: id, reason: 'Error: kaput', code: 'RELQ_JOB_FAILED' });
  });

  test('resolves even when the completion happens while its event connection is reconnecting', async () => {
    // Pub/sub is not durable: a completion published while the subscriber connection is down
    // is lost. waitForResult must still learn it (e.g. by re-reading the job on re-subscribe).
    const q = res.queue<number, string>();
    const waiter = res.twin<number, string>(q);
    const obs = res.client();
    const { id } = await q.add(1);
    const [l] = await q.lease();
    const p = waiter.waitForResult(id, { timeoutMs: 10_000 }).then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    );
    await eventsReady(obs, q);
    await obs.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await q.ack(l!, 'done');
    expect(await p).toEqual({ v: 'done' });
  });

  test('rejects with TimeoutError when the job does not finish in time', async () => {
    const q = res.queue<number, number>();
    const obs = res.client();
    const { id } = await q.add(1);
    const t = Date.now();
    const err = await q.waitForResult(id, { timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).code).toBe('RELQ_TIMEOUT');
    expect(Date.now() - t).toBeGreaterThanOrEqual(290);
    expect(Date.now() - t).toBeLessThan(3000); // at its timeout, not much later
    // and it left no subscription behind
    await waitUntil(async () => {
      const r = (await obs.call('PUBSUB', 'SHARDNUMSUB', q.keys.byName.events)) as [string, number];
      return Number(r[1]) === 0;
    }, 'unsubscribe');
  });
});
