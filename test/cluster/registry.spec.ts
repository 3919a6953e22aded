/**
 * The registry of queue names on a Redis Cluster: the registry hash has a slot of its own,
 * queues on every master register into it and leave it on deleteQueue, and the scripts'
 * calls never mix slots.
 */
import { listQueues, Queue } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
}, 60_000);
afterAll(() => cluster?.stop());

// Names whose slots fall on all three masters (checked below).
const NAMES = Array.from({ length: 9 }, (_, i) => `rq-${i}-${'z'.repeat(i % 4)}`);

test('queues on every master are listed from their first add until deleteQueue', async () => {
  const client = cluster.client();
  const prefix = 'reg';
  const slotOf = async (key: string) => Number(await client.call('CLUSTER', 'KEYSLOT', key));
  const slots = await Promise.all(NAMES.map((n) => slotOf(`{${prefix}:${n}}`)));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  expect(slots).not.toContain(await slotOf(`{${prefix}:}:queues`));

  const queues = NAMES.map((n) => new Queue<string>(n, { connection: client, prefix }));
  try {
    for (const q of queues) await q.add('x');
    await queues[1]!.addFlow({ data: 'parent', children: [{ data: 'child' }] });
    await queues[2]!.upsertScheduler('s', { everyMs: 60_000 });
    expect((await listQueues(client, { prefix })).map((q) => q.name)).toEqual([...NAMES].sort());
    for (const q of queues.slice(0, 5)) await q.deleteQueue({ tombstoneMs: 1 });
    expect((await listQueues(client, { prefix })).map((q) => q.name)).toEqual(NAMES.slice(5).sort());
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}, 60_000);
