/**
 * The relq CLI on a Redis Cluster (--cluster): queues on every master are listed from the
 * registry's own slot, and each command reaches its queue's master; the function library is
 * checked, and loaded by `relq functions load`, on every master.
 */
import { Redis } from 'ioredis';
import { Queue, type RelqWarning } from '../../lib/index.js';
import { scriptCode } from '../../lib/core/redis/script-code.js';
import { CliHarness, closedPort, type CliRun } from '../support/cli-harness.js';
import { commandStats, statsDelta } from '../support/engine-harness.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { hostileLibrary } from '../support/hostile-library.js';

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

test("other code under relq's library name on one master: a Cluster client warns and runs scripts; `relq functions load` loads every master, then FCALL", async () => {
  const masters = cluster.nodes.slice(0, 3).map((n) => new Redis({ host: n.host, port: n.port }));
  const queues: Queue[] = [];
  try {
    await Promise.all(masters.map((m) => m.call('FUNCTION', 'FLUSH')));
    await masters[1]!.call('FUNCTION', 'LOAD', hostileLibrary(scriptCode().libraryName, 'relq_stash'));
    const seed = cluster.nodes[0]!;
    const relq = (...args: string[]): Promise<CliRun> => cli.run(['--cluster', '--redis', `redis://${seed.host}:${seed.port}`, '--prefix', 'fl', ...args]);
    const where = (m: Redis) => `${m.options.host}:${m.options.port}`;
    const scriptCalls = async (work: () => Promise<unknown>) => {
      const before = await Promise.all(masters.map(commandStats));
      await work();
      const d = (await Promise.all(masters.map(commandStats))).map((after, i) => statsDelta(before[i]!, after));
      return { fcall: d.reduce((n, x) => n + (x.fcall ?? 0), 0), scripts: d.reduce((n, x) => n + (x.evalsha ?? 0) + (x.eval ?? 0), 0) };
    };

    const warnings: RelqWarning[] = [];
    const first = new Queue<string>('lib-a', { connection: cluster.client(), prefix: 'fl', onWarning: (w) => warnings.push(w) });
    queues.push(first);
    expect(await scriptCalls(() => first.add('x', { jobId: 'a1' }))).toMatchObject({ fcall: 0 });
    expect((await first.getJob('a1'))!.data).toBe('x');
    expect(warnings).toEqual([{ code: 'RELQ_LIBRARY_MISMATCH', queue: 'lib-a', message: expect.stringContaining(`on ${where(masters[1]!)} holds other code`) }]);
    expect(await masters[1]!.fcall('relq_stash', 0)).toEqual([]);

    // the other masters got it from that client (the default user may load it); the planted one was left alone
    const status = await relq('--json', 'functions', 'status');
    expect(status.code).toBe(1);
    const states = (s: CliRun, field: string) => Object.fromEntries(JSON.parse(s.stdout).nodes.map((n: Record<string, string>) => [n.node, n[field]]));
    expect(states(status, 'state')).toEqual({ [where(masters[0]!)]: 'loaded', [where(masters[1]!)]: 'different', [where(masters[2]!)]: 'loaded' });
    const load = await relq('--json', 'functions', 'load');
    expect(load.code).toBe(0);
    expect(states(load, 'was')).toEqual({ [where(masters[0]!)]: 'loaded', [where(masters[1]!)]: 'different', [where(masters[2]!)]: 'loaded' });
    expect((await relq('functions', 'status')).code).toBe(0);

    // a new client finds this version's code on every master: FCALL, for queues on every master
    const client = cluster.client();
    const later = NAMES.map((n) => new Queue<string>(n, { connection: client, prefix: 'fl' }));
    queues.push(...later);
    const calls = await scriptCalls(() => Promise.all(later.map((q) => q.add('y'))));
    expect(calls.scripts).toBe(0);
    expect(calls.fcall).toBeGreaterThanOrEqual(NAMES.length);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    masters.forEach((m) => m.disconnect());
  }
}, 120_000);
