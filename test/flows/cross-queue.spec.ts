/**
 * Flows across queues on a real Redis, through the public API: a parent in one queue waits for
 * children in others; a child's completion, death or removal in its own queue reaches the
 * parent in its queue atomically, and wakes the parent's workers; adding is all or nothing
 * across the queues. Queue names with a `{tag}` take the tag's Cluster slot.
 */
import { readFileSync } from 'node:fs';
import calculateSlot from 'cluster-key-slot';
import { QUEUE_KEYS } from '../../lib/core/redis/keys.js';
import { FlowJobExistsError, listQueues, QueueClosedError, QueueDeletedError, QueueFullError, Worker, type Job, type Lease, type Queue, type QueueEvent } from '../../lib/index.js';
import { eventsReady, useRedis, waitUntil } from '../support/engine-harness.js';
import { keyContent } from '../support/key-read.js';

const res = useRedis();

/** Queues of one prefix: `names[0]` is the one whose addFlow() the test calls. */
function queues(...names: string[]): Array<Queue<string, string>> {
  const first = res.queue<string, string>(names[0]);
  return [first, ...names.slice(1).map((n) => res.queue<string, string>(n, { prefix: first.prefix }))];
}

async function leaseOne(q: Queue<string, string>, id: string): Promise<Lease<string>> {
  const [l] = await q.lease();
  expect(l?.job.id).toBe(id);
  return l!;
}

async function snapshot(qs: Array<Queue<string, string>>): Promise<Record<string, string>> {
  const c = res.client();
  const out: Record<string, string> = {};
  for (const q of qs) {
    for (const k of (await c.keys(`${q.keys.tag}*`)).filter((k) => !k.endsWith(':listeners')).sort()) out[k] = await keyContent(c, k);
  }
  return out;
}

test("redis/keys.lua builds another queue's keys from its tag in QUEUE_KEYS order", () => {
  const lua = readFileSync('lib/core/redis/keys.lua', 'utf8');
  const names = /local QUEUE_KEY_NAMES = \{([^}]*)\}/.exec(lua)![1]!.split(',').map((n) => n.trim().replace(/'/g, ''));
  expect(names).toEqual([...QUEUE_KEYS]);
});

test('a name with a {tag} takes the slot of <prefix>:<tag>; a name without braces keeps its keys', () => {
  const [plain, email, sms] = queues('orders', '{orders}-email', 'x{orders}y');
  expect(plain.keys.tag).toBe(`{${plain.prefix}:orders}`);
  expect(email.keys.tag).toBe(`{${plain.prefix}:orders}{{orders}-email}`);
  const slot = calculateSlot(`${plain.prefix}:orders`);
  expect([plain, email, sms].map((q) => calculateSlot(q.keys.byName.jobs))).toEqual([slot, slot, slot]);
  expect(() => res.queue('{a}{b}')).toThrow('one non-empty tag');
  expect(() => res.queue('{}x')).toThrow('one non-empty tag');
});

test('a parent in one queue runs on its own workers once its children in two other queues completed', async () => {
  const [orders, email, sms] = queues('{o}-orders', '{o}-email', '{o}-sms');
  const flow = await orders.addFlow({
    data: 'ship',
    opts: { jobId: 'ship' },
    children: [
      { data: 'mail', queue: email.name, opts: { jobId: 'mail' } },
      { data: 'text', queue: sms.name, opts: { jobId: 'text' }, children: [{ data: 'lookup', opts: { jobId: 'lookup' } }] },
    ],
  });
  expect(flow.children.map((c) => c.id)).toEqual(['mail', 'text']);
  // listed, as a queue's own first add would list it
  expect((await listQueues(res.server.url, { prefix: orders.prefix })).map((q) => q.name).sort()).toEqual([orders.name, email.name, sms.name].sort());
  expect(await orders.getJob('ship')).toMatchObject({ state: 'waiting-children', children: { unfinished: 2 } });
  expect(await email.getJob('mail')).toMatchObject({ state: 'pending' });
  // a child without a queue is in its parent's
  expect(await sms.getJob('text')).toMatchObject({ state: 'waiting-children' });
  expect(await sms.getJob('lookup')).toMatchObject({ state: 'pending' });
  expect(await orders.counts()).toMatchObject({ pending: 0, waitingChildren: 1 });

  const ran: Record<string, unknown> = {};
  // started first: it blocks on its own queue's wake key until the last child completes
  res.worker(
    new Worker<string, string>(orders, async (job: Job<string>) => {
      ran[job.id] = await job.childrenResults();
      return 'shipped';
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(ran).toEqual({});
  const text = async (job: Job<string>) => `${job.data}!`;
  res.worker(new Worker<string, string>(email, text));
  res.worker(new Worker<string, string>(sms, text));
  await waitUntil(async () => (await orders.getJob('ship'))?.state === 'completed', 'the parent completed', 5000);
  expect(ran).toEqual({ ship: { mail: 'mail!', text: 'text!' } });
  expect(await sms.childrenResults('text')).toEqual({ lookup: 'lookup!' });
});

test("a child that dies in its queue fails its parent in another, up the tree; 'ignore' goes on without it", async () => {
  const [a, b, c] = queues('{t}-a', '{t}-b', '{t}-c');
  await a.addFlow({
    data: 'root',
    opts: { jobId: 'root' },
    children: [{ data: 'mid', queue: b.name, opts: { jobId: 'mid' }, children: [{ data: 'leaf', queue: c.name, opts: { jobId: 'leaf', attempts: 1 } }] }],
  });
  expect(await c.nack(await leaseOne(c, 'leaf'), { error: 'boom' })).toBe(true);
  expect(await b.getJob('mid')).toMatchObject({ state: 'dead', lastError: 'child leaf failed: boom' });
  expect(await a.getJob('root')).toMatchObject({ state: 'dead', lastError: 'child mid failed: child leaf failed: boom' });

  await a.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', queue: b.name, onFailure: 'ignore', opts: { jobId: 'x', attempts: 1 } }] });
  expect(await b.nack(await leaseOne(b, 'x'), { error: 'boom' })).toBe(true);
  expect(await a.getJob('p')).toMatchObject({ state: 'pending', children: { unfinished: 0, results: {} } });
});

test("removing or draining a child in its queue fails its parent in another; removing the parent leaves the other queue's children holding no one", async () => {
  const [a, b] = queues('{r}-a', '{r}-b');
  await a.addFlow({ data: 'p1', opts: { jobId: 'p1' }, children: [{ data: 'k', queue: b.name, opts: { jobId: 'k1' } }] });
  expect(await b.remove('k1')).toBe(true);
  expect(await a.getJob('p1')).toMatchObject({ state: 'dead', lastError: 'child k1 was removed' });

  await a.addFlow({ data: 'p2', opts: { jobId: 'p2' }, children: [{ data: 'k', queue: b.name, opts: { jobId: 'k2' } }] });
  expect(await b.drain()).toBe(1);
  expect(await a.getJob('p2')).toMatchObject({ state: 'dead', lastError: 'child k2 was removed' });

  await a.addFlow({ data: 'p3', opts: { jobId: 'p3' }, children: [{ data: 'k', queue: b.name, opts: { jobId: 'k3' } }, { data: 'own', opts: { jobId: 'own' } }] });
  expect(await a.remove('p3')).toBe(true);
  expect(await a.getJob('own')).toBeNull(); // its own queue's children go with it
  expect(await b.ack(await leaseOne(b, 'k3'), 'K')).toBe(true);
  expect(await a.getJob('p3')).toBeNull();
  expect(await a.counts()).toMatchObject({ pending: 0, waitingChildren: 0, dead: 2 });
  // the children's links to their parents went as they stopped holding them
  expect(await res.client().exists(b.keys.derived.flows)).toBe(0);

  // draining the parent's queue takes the parent; its child in the other queue holds no one
  await a.addFlow({ data: 'p4', opts: { jobId: 'p4' }, children: [{ data: 'k', queue: b.name, opts: { jobId: 'k4' } }] });
  expect(await a.drain()).toBe(1);
  expect(await b.ack(await leaseOne(b, 'k4'), 'K')).toBe(true);
  expect(await a.getJob('p4')).toBeNull();

  // deleting the child's queue: the parent learns its child was removed
  await a.addFlow({ data: 'p5', opts: { jobId: 'p5' }, children: [{ data: 'k', queue: b.name, opts: { jobId: 'k5' } }, { data: 'own', opts: { jobId: 'own5' } }] });
  await b.deleteQueue();
  expect(await a.getJob('p5')).toMatchObject({ state: 'dead', lastError: 'child k5 was removed' });
});

test('a flow across queues is added whole or not at all, its errors naming the queue at fault', async () => {
  const [a, b] = queues('{w}-a', '{w}-b');
  await b.add('x', { jobId: 'taken' });
  const before = await snapshot([a, b]);
  const flow = (jobId: string) => ({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'own', opts: { jobId: 'own' } }, { data: 'c', queue: b.name, opts: { jobId } }] });
  const err = await a.addFlow(flow('taken')).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FlowJobExistsError);
  expect(err).toMatchObject({ queue: b.name, jobId: 'taken' });
  expect(await snapshot([a, b])).toEqual(before);

  // a bounded queue counts the flow's jobs it would hold, not the others'
  const bounded = res.queue<string, string>('{w}-bounded', { prefix: a.prefix, bound: 2 });
  await bounded.add('x'); // its first add stores its bound
  const full = await a.addFlow({ data: 'p', children: [{ data: 'c', queue: bounded.name }, { data: 'd', queue: bounded.name }] }).catch((e: unknown) => e);
  expect(full).toBeInstanceOf(QueueFullError);
  expect(String(full)).toContain(`queue '${bounded.name}' has room for 1 job(s)`);
  expect(await a.counts()).toMatchObject({ pending: 0, waitingChildren: 0 });
  expect((await a.addFlow({ data: 'p', children: [{ data: 'own' }, { data: 'c', queue: bounded.name }] })).created).toBe(true);
});

test('a deleted queue anywhere in the flow refuses it, and is not listed again', async () => {
  const [a, b] = queues('{d}-a', '{d}-b');
  await b.add('x');
  await b.deleteQueue();
  const err = await a.addFlow({ data: 'p', children: [{ data: 'c', queue: b.name }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QueueDeletedError);
  expect((await listQueues(res.server.url, { prefix: a.prefix })).map((q) => q.name)).not.toContain(b.name);
});

test('a closed queue anywhere in the flow refuses it', async () => {
  const [a, b] = queues('{c}-a', '{c}-b');
  await b.closeQueue();
  const before = await snapshot([a, b]);
  const err = await a.addFlow({ data: 'p', children: [{ data: 'c', queue: b.name }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QueueClosedError);
  expect(String(err)).toContain(b.name);
  expect(await snapshot([a, b])).toEqual(before);
});

test('where an ACL refuses FUNCTION, a flow across queues runs as scripts too (their key count named per call)', async () => {
  const admin = res.client();
  await admin.call('ACL', 'SETUSER', 'flows-nofunctions', 'on', '>secret-pw', '~*', '&*', '+@all', '-function');
  const prefix = `nf${Date.now()}`;
  const connection = { host: res.server.host, port: res.server.port, username: 'flows-nofunctions', password: 'secret-pw' };
  const a = res.queue<string, string>('{s}-a', { connection, prefix });
  const b = res.queue<string, string>('{s}-b', { connection, prefix });
  const calls = async (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(await admin.info('commandstats'))?.[1] ?? 0);
  const scripts = async () => (await calls('eval')) + (await calls('evalsha'));
  const [fcalls, before] = [await calls('fcall'), await scripts()];
  await a.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', queue: b.name, opts: { jobId: 'c' } }] });
  expect(await b.ack(await leaseOne(b, 'c'), 'C')).toBe(true);
  expect(await a.getJob('p')).toMatchObject({ state: 'pending', children: { results: { c: 'C' } } });
  expect(await calls('fcall')).toBe(fcalls);
  expect(await scripts()).toBeGreaterThan(before);
});

test("each queue publishes its own jobs' events: a parent's on its queue's stream, whichever queue's call moved it", async () => {
  const [a, b] = queues('{e}-a', '{e}-b');
  const got: Record<string, QueueEvent[]> = { a: [], b: [] };
  const subs = [a.events().subscribe((e) => got.a!.push(e)), b.events().subscribe((e) => got.b!.push(e))];
  try {
    await eventsReady(res.client(), a);
    await eventsReady(res.client(), b);
    await a.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'c', queue: b.name, opts: { jobId: 'c' } }, { data: 'd', queue: b.name, opts: { jobId: 'd', attempts: 1 } }] }, { onChildFailure: 'ignore' });
    expect(await b.ack(await leaseOne(b, 'c'), 'C')).toBe(true);
    expect(await b.nack(await leaseOne(b, 'd'), { error: 'boom' })).toBe(true);
    await waitUntil(() => got.a!.some((e) => e.type === 'promoted'), "the parent's promoted event");
    await waitUntil(() => got.b!.some((e) => e.type === 'dead'), "the child's dead event");
    expect(got.a!.map((e) => [e.type, e.id])).toEqual([['added', 'p'], ['waiting-children', 'p'], ['promoted', 'p']]);
    expect(got.b!.every((e) => e.queue === b.name && e.id !== 'p')).toBe(true);
  } finally {
    for (const s of subs) s.unsubscribe();
  }
});
