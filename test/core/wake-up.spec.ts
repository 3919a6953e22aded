/**
 * Idle workers wait on a wake-up list instead of polling. A token can be lost: taken by a
 * consumer that dies before it leases, or cut off with its reply when the connection drops.
 * These tests take a token with a raw client that then disconnects (a consumer that died),
 * and check that idle workers still get the jobs after the next sweep, long before their
 * 30 s safety lease. A lane of a worker may also miss a token another lane's lease call
 * dropped: a delayed job still comes due on time.
 */
import { Cluster } from 'ioredis';
import { ClosedError, Queue, Worker } from '../../lib/index.js';
import { internalsOf } from '../../lib/core/queue/internals.js';
import type { Blocker } from '../../lib/core/redis/blocking-wait.js';
import { freePort } from '../../lib/testing/redis-ping.js';
import { blockedPopIds } from '../support/redis.js';
import { blockedClients, sleep, useRedis, waitUntil, within } from '../support/engine-harness.js';

const res = useRedis();

/** A raw client blocked on `q`'s wake-up list ahead of every worker: it takes the next token. */
async function tokenThief(q: { keys: { byName: { wake: string } } }) {
  const obs = res.client();
  const thief = res.client();
  await thief.del(q.keys.byName.wake); // a stale token of the warm-up add
  const before = await blockedClients(obs);
  const taken = thief.blpop(q.keys.byName.wake, 0);
  await waitUntil(async () => (await blockedClients(obs)) === before + 1, 'the thief blocked first');
  return { obs, taken };
}

test('an idle worker whose wake-up token was taken by a consumer that died leases the job after the next sweep', async () => {
  const q = res.queue<string>();
  await q.add('warm-up'); // the library loaded, the queue's keys exist
  await q.lease().then((ls) => Promise.all(ls.map((l) => q.ack(l))));
  const { obs, taken } = await tokenThief(q);
  const done: string[] = [];
  res.worker(new Worker<string>(res.twin<string>(q), async (job) => void done.push(job.data), { blockMs: 1000 }));
  await waitUntil(async () => (await blockedClients(obs)) === 2, 'the worker blocked behind the thief');
  await q.add('lost-token');
  await q.add('added-behind-it'); // into a queue that holds a job: pushes no token
  expect(await taken).not.toBeNull(); // the only token went to a consumer that will never lease
  expect(await obs.exists(q.keys.byName.wake)).toBe(0);
  await q.sweep();
  // well within the worker's 30 s safety lease
  await waitUntil(() => done.length === 2, 'both jobs leased after the sweep', 10_000);
  expect(done).toEqual(['lost-token', 'added-behind-it']);
  expect(await q.counts()).toMatchObject({ pending: 0, completed: 3 });
});

test('a sweep pushes a wake-up token only when jobs wait without one and the queue is not paused', async () => {
  const q = res.queue<string>();
  const obs = res.client();
  const wake = q.keys.byName.wake;
  await q.sweep(); // empty queue
  expect(await obs.exists(wake)).toBe(0);
  await q.add('a');
  expect(await obs.llen(wake)).toBe(1); // the add's own token
  await q.sweep();
  expect(await obs.llen(wake)).toBe(1); // a token waits: none added
  await obs.del(wake);
  await q.pause();
  await q.sweep();
  expect(await obs.exists(wake)).toBe(0); // paused: a woken worker could lease nothing
  await q.resume(); // a resume wakes a leaser itself
  await obs.del(wake);
  await q.sweep();
  expect(await obs.llen(wake)).toBe(1); // jobs wait, no token: made up for
});

test('a wait whose connection is killed ends at once; its BLPOP is not sent again, and the next wait takes the token', async () => {
  const q = res.queue<string>();
  const obs = res.client();
  const internals = internalsOf<string>(q)!;
  const blocker = internals.openBlocker() as Blocker; // a queue's own: a Blocker
  const key = 'relq-test:wake-cut';
  try {
    const wait = blocker.pop(key, 60_000);
    await waitUntil(async () => (await blockedPopIds(obs)).length === 1, 'the pop blocked');
    await obs.client('KILL', 'ID', (await blockedPopIds(obs))[0]!);
    expect(await within(wait, 5000, 'the cut wait')).toEqual({ value: null, cut: true });
    await obs.rpush(key, 'token');
    // a BLPOP sent again after a reconnect would have taken it by now
    await sleep(300);
    expect(await obs.lrange(key, 0, -1)).toEqual(['token']);
    expect(await within(blocker.pop(key, 5000), 5000, 'the next wait')).toEqual({ value: 'token', cut: false });
  } finally {
    internals.closeBlocker(blocker);
    await obs.del(key);
  }
});

test('a wait on a Cluster client that reaches no node is not cut by its failed attempts, and closing ends it at once', async () => {
  let attempts = 0;
  const client = new Cluster([{ host: '127.0.0.1', port: await freePort() }], {
    lazyConnect: true, // connects on the first command: only the blocking connection tries
    // one failed attempt, and the next far away: the wait is closed in between, when a Cluster
    // client ignores disconnect() (its queued BLPOP is neither sent nor rejected)
    clusterRetryStrategy: () => {
      attempts += 1;
      return 60_000;
    },
  });
  client.on('error', () => undefined);
  const q = new Queue<string>('unreachable', { connection: client });
  const internals = internalsOf<string>(q)!;
  const blocker = internals.openBlocker() as Blocker; // a queue's own: a Blocker
  try {
    let settled = false;
    const wait = blocker.pop('relq-test:never', 60_000).finally(() => (settled = true));
    await waitUntil(() => attempts === 1, 'the blocking connection to fail its first attempt');
    // nothing was sent, so nothing was lost: a cut here made a worker lease in a loop
    expect(settled).toBe(false);
    internals.closeBlocker(blocker);
    expect(await within(wait, 2000, 'the closed wait')).toEqual({ value: null, cut: true });
    await expect(blocker.pop('relq-test:never', 1000)).rejects.toThrow(ClosedError);
  } finally {
    await q.close();
    client.disconnect();
  }
});

test('a delayed job is leased once due when the lane waiting on Redis looked before it was delayed', async () => {
  // Concurrency 4: two lanes. Both wait for a slot while four handlers run. Then, on the
  // queue's one connection and before any reply is read: lane A's lease call (settling a; it
  // finds nothing delayed), the add of a delayed job (its wake-up token waits, no lane
  // blocks), lane B's lease call (settling b; it learns the due time, leases nothing and drops
  // the token). Lane A then waits on Redis knowing of no delayed job, lane B behind it.
  const q = res.queue<string>();
  const release = new Map<string, () => void>();
  const started: string[] = [];
  res.worker(
    new Worker<string>(
      q,
      async (job) => {
        started.push(job.data);
        if (job.data !== 'later') await new Promise<void>((resolve) => release.set(job.data, resolve));
      },
      { concurrency: 4 },
    ),
  );
  await q.addBulk(['a', 'b', 'c', 'd'].map((data) => ({ data })));
  await waitUntil(() => release.size === 4, 'four handlers running');
  release.get('a')!();
  // after every microtask: lane A's lease call is sent, its reply not read yet
  process.nextTick(() => {
    void q.add('later', { delayMs: 200 });
    release.get('b')!();
  });
  // well within the worker's 30 s safety lease
  await waitUntil(() => started.includes('later'), 'the delayed job leased once due', 3000);
});
