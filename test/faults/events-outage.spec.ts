/**
 * queue.events() through outages: a subscriber without an error handler never sees an error
 * (which would crash the process); the stream subscribes once Redis answers, and keeps
 * delivering after Redis restarts. The outage is reported as a warning, not an error.
 */
import { Queue, type QueueEvent, type RelqWarning } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

let redis: TestRedis;
const closers: Array<() => Promise<unknown>> = [];
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);

beforeAll(async () => {
  redis = await startRedis({ controllable: true });
  process.on('uncaughtException', onUncaught);
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});
afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  await redis?.stop();
});

function open(prefix: string, warnings: RelqWarning[] = []): Queue<number> {
  const q = new Queue<number>('outage', { connection: redis.url, prefix, onWarning: (w) => warnings.push(w) });
  closers.push(() => q.close());
  return q;
}

test('subscribed while Redis is down: no error, a warning, and events once it is back', async () => {
  const prefix = uniquePrefix();
  const warnings: RelqWarning[] = [];
  await redis.kill();
  const q = open(prefix, warnings);
  const seen: QueueEvent[] = [];
  const sub = q.events().subscribe((e) => seen.push(e)); // no error handler, on purpose
  closers.push(async () => sub.unsubscribe());
  try {
    await waitUntil(() => warnings.some((w) => w.code === 'RELQ_EVENTS_RETRY'), 'the retry warning', 20_000);
    expect(warnings[0]!.message).toMatch(/event stream cannot subscribe .*retrying/);
  } finally {
    await redis.restart();
  }
  const producer = open(prefix);
  // the stream subscribes again by itself; the first add after that is heard
  await waitUntil(async () => {
    await producer.add(1);
    return seen.some((e) => e.type === 'added');
  }, 'an added event after Redis came back', 30_000);
  expect(sub.closed).toBe(false);
  expect(uncaught).toEqual([]);
  expect(warnings.map((w) => w.message).join('\n')).toMatch(/subscribed again after \d+ failed attempt/);
});

test('subscribed, then Redis restarts: the stream goes on without an error', async () => {
  const prefix = uniquePrefix();
  const q = open(prefix);
  const seen: QueueEvent[] = [];
  const errors: unknown[] = [];
  const sub = q.events().subscribe({ next: (e) => seen.push(e), error: (e: unknown) => errors.push(e) });
  closers.push(async () => sub.unsubscribe());
  const producer = open(prefix);
  await waitUntil(async () => {
    await producer.add(0);
    return seen.some((e) => e.type === 'added');
  }, 'the first added event');

  await redis.restart();
  const before = seen.length;
  await waitUntil(async () => {
    await producer.add(1).catch(() => undefined); // the producer reconnects meanwhile
    return seen.length > before;
  }, 'events after the restart', 30_000);
  expect(errors).toEqual([]);
  expect(sub.closed).toBe(false);
  expect(uncaught).toEqual([]);
});

test('the stream completes (no error) when the queue object is closed', async () => {
  const q = open(uniquePrefix());
  let completed = false;
  const errors: unknown[] = [];
  q.events().subscribe({ complete: () => (completed = true), error: (e: unknown) => errors.push(e) });
  await q.close();
  expect(completed).toBe(true);
  expect(errors).toEqual([]);
});
