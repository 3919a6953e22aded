/** Produced / consumed message and byte counts. */
import { useRedis, commandStats, statsDelta, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

test('exact after a known sequence: 3 puts totalling 12 bytes, 2 gets', async () => {
  const q = res.queue<unknown>('s1', { stats: true });
  await q.add('ab'); // JSON "ab": 4 bytes
  await q.add(1234); // 1234: 4 bytes
  await q.add(true); // true: 4 bytes
  const consumer = res.twin(q); // a consumer counts without options: the flag is in Redis
  const leases = [...(await consumer.lease()), ...(await consumer.lease())];
  await consumer.ackBatch(leases);
  expect(await q.stats()).toEqual({ enabled: true, produced: { messages: 3, bytes: 12 }, consumed: { messages: 2, bytes: 8 } });
  // a duplicate jobId is not produced again; a redelivery is consumed again
  await q.add('x', { jobId: 'j' }); // "x": 3 bytes
  await q.add('x', { jobId: 'j' });
  const [l] = await consumer.lease(); // true (4 bytes)
  await consumer.nack(l!, { delayMs: 0 });
  await consumer.lease({ count: 2 }); // "x" and true again: 7 bytes
  expect(await q.stats()).toEqual({ enabled: true, produced: { messages: 4, bytes: 15 }, consumed: { messages: 5, bytes: 19 } });
});

test('a producer without the stats option counts too once the queue counts', async () => {
  const q = res.queue('s-plain', { stats: true });
  await q.add('a'); // stores the flag
  const plain = res.twin(q);
  await plain.add('bc'); // its first add reads the queue's state in the script
  for (let i = 0; i < 3; i++) await plain.add('d');
  expect((await q.stats()).produced).toEqual({ messages: 5, bytes: 3 + 4 + 3 * 3 });
});

test('stats off: nothing counted, and the plain add costs no extra command', async () => {
  const q = res.queue('s3');
  const obs = res.client();
  await q.add(1);
  const before = await commandStats(obs);
  await q.add(2);
  const d = statsDelta(before, await commandStats(obs));
  expect(d.hincrby ?? 0).toBe(0);
  expect(d.hmget ?? 0).toBe(0);
  // not counting, and it says so: zeros that are not the queue's traffic
  expect(await q.stats()).toEqual({ enabled: false, produced: { messages: 0, bytes: 0 }, consumed: { messages: 0, bytes: 0 } });
});

test('stats: false turns counting off for the queue', async () => {
  const q = res.queue('s4', { stats: true });
  await q.add(1);
  const off = res.twin(q, { stats: false });
  await off.add(2);
  await q.add(3);
  expect(await q.stats()).toMatchObject({ enabled: false, produced: { messages: 1 } }); // what was counted while on
  expect((await q.queueState()).stats).toBe(false);
});

test('stats totals are published as events, from the scripts that change them', async () => {
  const q = res.queue<unknown>('s-ev', { stats: true });
  const observer = res.twin(q);
  const seen: Array<{ produced?: unknown; consumed?: unknown }> = [];
  const sub = observer.events().subscribe((e) => {
    if (e.type === 'stats') seen.push({ produced: e.produced, consumed: e.consumed });
  });
  try {
    // the subscription is live once an event of ours comes through it
    await waitUntil(
      async () => {
        await q.add('ab'); // 4 bytes each
        return seen.length > 0;
      },
      'a stats event',
      10_000,
      50,
    );
    const producedBefore = (await q.stats()).produced;
    await q.addBulk([{ data: 1234 }, { data: true }]); // 8 bytes
    await res.twin(q).lease({ count: 2 });
    // events arrive in order: the lease's is the last
    await waitUntil(() => seen.some((e) => e.consumed !== undefined), 'the stats event of the lease', 10_000);
    expect(seen.at(-2)).toEqual({
      produced: { messages: producedBefore.messages + 2, bytes: producedBefore.bytes + 8 },
      consumed: undefined,
    });
    expect(seen.at(-1)).toEqual({ produced: undefined, consumed: { messages: 2, bytes: 8 } });
  } finally {
    sub.unsubscribe();
  }
});
