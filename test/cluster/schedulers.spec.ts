/**
 * Job schedulers on a Redis Cluster: every scheduler key shares the queue's slot, for
 * queues on every master (one cluster without replicas, started once).
 */
import { Queue } from '../../lib/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0);
}, 60_000);
afterAll(() => cluster?.stop());

const NAMES = Array.from({ length: 6 }, (_, i) => `sq-${i}-${'z'.repeat(i % 3)}`);

test('upsert, tick, list, counts, remove and deleteQueue for queues on every master', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  const queues = NAMES.map((name) => new Queue(name, { connection: client }));
  try {
    for (const q of queues) {
      expect(await q.upsertScheduler('s', { everyMs: 100 }, { data: q.name })).toBe(true);
      await q.upsertScheduler('c', { cron: '0 0 * * *', tz: 'Asia/Kolkata' });
    }
    await new Promise((r) => setTimeout(r, 250));
    for (const q of queues) {
      const r = await q.runSchedulers();
      expect(r.advanced).toBe(1);
      expect((await q.getSchedulers()).map((s) => s.id)).toEqual(['c', 's']);
      expect(await q.counts()).toMatchObject({ schedulers: 2, schedulersOverdue: 0 });
      expect(await q.removeScheduler('c')).toBe(true);
      expect(await q.deleteQueue({ tombstoneMs: 1000 })).toBeGreaterThan(0);
      expect(await client.exists(q.keys.derived.schedulers, q.keys.derived.schedulerNext, q.keys.derived.schedulerState)).toBe(0);
    }
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
});
