/**
 * Flows on a Redis Cluster: adding a flow, completing its children, failing and removing its
 * parent touch one slot, for queues on every master; a child naming a queue of another slot is
 * refused before anything is written; queues whose names share a `{tag}` share a slot and take
 * flows across them.
 */
import { CrossQueueFlowError, Queue } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
}, 60_000);
afterAll(() => cluster?.stop());

// Names whose slots fall on all three masters (checked below).
const NAMES = ['fq-0', 'fq-1-y', 'fq-2-yy', 'fq-3-yyy', 'fq-4', 'fq-5-y'];

test('flows complete, fail and are removed on queues on every master; another queue is refused', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  for (const name of NAMES) {
    const q = new Queue<string, string>(name, { connection: client });
    await q.addFlow({ data: 'r', opts: { jobId: 'r' }, children: [{ data: 'm', opts: { jobId: 'm' }, children: [{ data: 'l', opts: { jobId: 'l' } }] }] });
    for (const id of ['l', 'm']) {
      const [lease] = await q.lease();
      expect(lease!.job.id).toBe(id);
      await q.ack(lease!, id.toUpperCase());
    }
    const [root] = await q.lease();
    expect(await q.childrenResults('r')).toEqual({ m: 'M' });
    await q.ack(root!, 'R');
    expect(await q.getJob('r')).toMatchObject({ state: 'completed', result: 'R', children: { results: { m: 'M' } } });

    await q.addFlow({ data: 'p', opts: { jobId: 'p' }, children: [{ data: 'x', opts: { jobId: 'x', attempts: 1 } }, { data: 'y', opts: { jobId: 'y', delayMs: 60_000 } }] });
    const [x] = await q.lease();
    await q.nack(x!, { error: 'boom' });
    expect(await q.getJob('p')).toMatchObject({ state: 'dead', lastError: 'child x failed: boom' });
    await q.addFlow({ data: 'p', opts: { jobId: 'p2' }, children: [{ data: 'z', opts: { jobId: 'z', delayMs: 60_000 } }] });
    expect(await q.remove('p2')).toBe(true);
    expect(await q.getJob('z')).toBeNull();

    const other = NAMES[(NAMES.indexOf(name) + 1) % NAMES.length]!;
    const before = await q.counts();
    await expect(q.addFlow({ data: 'p', children: [{ data: 'c', queue: other }] })).rejects.toBeInstanceOf(CrossQueueFlowError);
    expect(await q.counts()).toEqual(before);
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('queues whose names share a {tag} share a slot, and a flow across them runs; one without the tag is refused', async () => {
  const client = cluster.client();
  const [orders, email, sms] = ['{shop}-orders', '{shop}-email', '{shop}-sms'].map((n) => new Queue<string, string>(n, { connection: client }));
  const slots = await Promise.all([orders, email, sms].map(async (q) => Number(await client.call('CLUSTER', 'KEYSLOT', q!.keys.byName.jobs))));
  expect(new Set(slots).size).toBe(1);
  expect(slots[0]).toBe(Number(await client.call('CLUSTER', 'KEYSLOT', 'relq:shop')));

  await orders!.addFlow({
    data: 'ship',
    opts: { jobId: 'ship' },
    children: [
      { data: 'mail', queue: email!.name, opts: { jobId: 'mail' } },
      { data: 'text', queue: sms!.name, opts: { jobId: 'text', attempts: 1 } },
    ],
  });
  const [mail] = await email!.lease();
  expect(await email!.ack(mail!, 'M')).toBe(true);
  expect(await orders!.getJob('ship')).toMatchObject({ state: 'waiting-children', children: { unfinished: 1, results: { mail: 'M' } } });
  const [text] = await sms!.lease();
  expect(await sms!.ack(text!, 'T')).toBe(true);
  const [ship] = await orders!.lease();
  expect(ship!.job.id).toBe('ship');
  expect(await orders!.childrenResults('ship')).toEqual({ mail: 'M', text: 'T' });
  expect(await orders!.getFlow('ship')).toMatchObject({ state: 'working', children: [{ queue: email!.name, state: 'completed' }, { queue: sms!.name, state: 'completed' }] });

  // a child's death reaches its parent in the other queue, up the tree; 'continue' runs it at once
  await orders!.addFlow({
    data: 'r',
    opts: { jobId: 'r' },
    children: [{ data: 'm', queue: email!.name, opts: { jobId: 'm' }, children: [{ data: 'l', queue: sms!.name, opts: { jobId: 'l', attempts: 1 } }] }],
  });
  await orders!.addFlow({ data: 'c', opts: { jobId: 'c' }, children: [{ data: 'x', queue: sms!.name, onFailure: 'continue', opts: { jobId: 'x', attempts: 1 } }, { data: 'y', queue: email!.name, opts: { jobId: 'y', delayMs: 60_000 } }] });
  for (const id of ['l', 'x']) {
    const [l] = await sms!.lease();
    expect(l!.job.id).toBe(id);
    expect(await sms!.nack(l!, { error: 'boom' })).toBe(true);
  }
  expect(await orders!.getJob('r')).toMatchObject({ state: 'dead', lastError: 'child m failed: child l failed: boom' });
  expect(await orders!.getJob('c')).toMatchObject({ state: 'pending', children: { failed: { x: 'boom' } } });

  const plain = new Queue<string, string>('shop-plain', { connection: client });
  const before = await Promise.all([orders!.counts(), plain.counts()]);
  const err = await orders!.addFlow({ data: 'p', children: [{ data: 'c', queue: plain.name }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CrossQueueFlowError);
  expect(err).toMatchObject({ field: 'flow.children[0].queue', otherQueue: 'shop-plain' });
  expect(await Promise.all([orders!.counts(), plain.counts()])).toEqual(before);
  for (const q of [orders!, email!, sms!, plain]) {
    await q.deleteQueue();
    await q.close();
  }
}, 60_000);

test('a running job adds children in queues of its {tag} on every master, waits for them and resumes; another slot is refused', async () => {
  const client = cluster.client();
  const tags = ['rt0', 'rt1-y', 'rt2-yy'];
  const slots = await Promise.all(tags.map(async (t) => Number(await client.call('CLUSTER', 'KEYSLOT', `relq:${t}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  for (const tag of tags) {
    const [parents, kids] = [`{${tag}}-parents`, `{${tag}}-kids`].map((n) => new Queue<string, string>(n, { connection: client }));
    await parents!.add('p', { jobId: 'p' });
    const [lease] = await parents!.lease();
    const added = await parents!.addChildren(lease!, [{ data: 'a', queue: kids!.name, opts: { jobId: 'a' } }, { data: 'b', opts: { jobId: 'b' } }]);
    expect(added.map((a) => a.created)).toEqual([true, true]);
    await expect(parents!.addChildren(lease!, [{ data: 'c', queue: 'elsewhere' }])).rejects.toBeInstanceOf(CrossQueueFlowError);
    expect(await parents!.waitForChildren(lease!)).toBe(true);
    expect(await parents!.getJob('p')).toMatchObject({ state: 'waiting-children', children: { unfinished: 2 } });
    const [a] = await kids!.lease();
    expect(await kids!.ack(a!, 'A')).toBe(true);
    const [b] = await parents!.lease();
    expect(b!.job.id).toBe('b');
    expect(await parents!.ack(b!, 'B')).toBe(true);
    const [again] = await parents!.lease();
    expect(again!.job.id).toBe('p');
    expect(await parents!.childrenResults('p')).toEqual({ a: 'A', b: 'B' });
    expect(await parents!.ack(again!, 'P')).toBe(true);
    for (const q of [parents!, kids!]) {
      await q.deleteQueue();
      await q.close();
    }
  }
}, 60_000);
