/**
 * relq/metrics on a Redis Cluster: the gauges' read (counts and the oldest pending job, one
 * script per queue) touches one slot, for queues on every master, grouped and prioritised jobs
 * included.
 */
import { Registry } from 'prom-client';
import { Queue } from '../../lib/index.js';
import { RelqMetrics } from '../../lib/metrics/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { parseExposition } from './exposition.js';

let cluster: TestCluster;
const queues: Array<Queue<string>> = [];
let metrics: RelqMetrics | undefined;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
}, 60_000);
afterAll(async () => {
  metrics?.close();
  await Promise.all(queues.map((q) => q.close()));
  await cluster?.stop();
});

// Names whose slots fall on all three masters (checked below).
const NAMES = ['mq-0', 'mq-1-y', 'mq-2-yy', 'mq-3-yyy', 'mq-4', 'mq-5-y'];

test('gauges of queues on every master are read at scrape time', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{relq:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  metrics = new RelqMetrics({ registry: new Registry() });
  for (const name of NAMES) {
    const q = new Queue<string>(name, { connection: client });
    queues.push(q);
    metrics.watchQueue(q);
    await q.add('plain');
    await q.add('urgent', { priority: 3 });
    await q.add('grouped', { group: 'g1' });
    await q.add('later', { delayMs: 60_000 });
  }
  const x = parseExposition(await metrics.registry.metrics());
  for (const name of NAMES) {
    expect(x.value('relq_queue_jobs', { queue: name, state: 'pending' })).toBe(3);
    expect(x.value('relq_queue_jobs', { queue: name, state: 'delayed' })).toBe(1);
    expect(x.value('relq_queue_oldest_pending_age_seconds', { queue: name })).toBeGreaterThanOrEqual(0);
    expect(x.value('relq_jobs_added_total', { queue: name })).toBe(4);
  }
}, 30_000);
