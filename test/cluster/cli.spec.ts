/**
 * The relq CLI on a Redis Cluster (--cluster): queues on every master are listed from the
 * registry's own slot, and each command reaches its queue's master.
 */
import { Queue } from '../../lib/index.js';
import { CliHarness, closedPort, type CliRun } from '../cli/_cli.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

const cli = new CliHarness();
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(3, 0); // no replicas: nothing here fails over
  cli.build();
}, 60_000);
afterAll(async () => {
  await cli.stopAll();
  await cluster?.stop();
});

// Names whose slots fall on all three masters (checked below).
const NAMES = Array.from({ length: 6 }, (_, i) => `cq-${i}-${'w'.repeat(i % 3)}`);

test('queues, counts, retry-dead and pause for queues on every master, through one seed node', async () => {
  const client = cluster.client();
  const slots = await Promise.all(NAMES.map(async (n) => Number(await client.call('CLUSTER', 'KEYSLOT', `{cl:${n}}`))));
  expect(new Set(slots.map((s) => Math.floor(s / 5462))).size).toBe(3);
  const queues = NAMES.map((n) => new Queue<string>(n, { connection: client, prefix: 'cl' }));
  const seed = cluster.nodes[0]!;
  const relq = (...args: string[]): Promise<CliRun> => cli.run(['--cluster', '--redis', `redis://${seed.host}:${seed.port}`, '--prefix', 'cl', ...args]);
  try {
    for (const q of queues) {
      await q.add('x', { jobId: 'dies', attempts: 1 });
      const [lease] = await q.lease();
      await q.nack(lease!, { error: 'boom' });
      await q.add('y');
    }
    const listed = await relq('--json', 'queues');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((q: { name: string }) => q.name)).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const counts = await relq('--json', 'counts', name);
      expect(JSON.parse(counts.stdout)).toMatchObject({ pending: 1, dead: 1 });
      expect(JSON.parse((await relq('--json', 'retry-dead', name)).stdout)).toEqual({ queue: name, retried: 1, ids: ['dies'] });
      expect((await relq('pause', name)).stdout).toBe(`paused '${name}'\n`);
    }
    for (const q of queues) expect(await q.counts()).toMatchObject({ pending: 2, dead: 0, paused: true });
    const unreachable = await cli.run(['--cluster', '--redis', `redis://127.0.0.1:${await closedPort()}`, 'queues']);
    expect(unreachable.code).toBe(3);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}, 120_000);
