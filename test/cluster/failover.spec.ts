/**
 * Cluster failover on 3 masters + 3 replicas. During a run over many queue names (every
 * master holds some) plus a bounded queue with groups, one master is killed (-9) and its
 * replica takes over: every queue keeps working, the function library is on the promoted
 * node, workers resume within 10 s, and nothing acknowledged on the surviving masters is
 * lost. Connections relq opens later (blocking waits, subscriptions) follow the cluster's
 * current nodes, not the client's original seed nodes.
 */
import { Cluster, Redis } from 'ioredis';
import { ConnectionError, Queue, Worker } from '../../lib/index.js';
import { startCluster, type ClusterNode, type TestCluster } from '../support/cluster.js';
import { Ledger, audit, ledgered, recordAnswers } from '../support/ledger.js';
import { blockedPopIds, uniquePrefix } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const until = (cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) => waitUntil(cond, what, timeoutMs, 20);

let cluster: TestCluster;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  cluster = await startCluster(3, 1);
}, 90_000);
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});
afterAll(async () => {
  await cluster?.stop();
});

async function slotOf(client: Cluster, key: string): Promise<number> {
  return Number(await client.call('CLUSTER', 'KEYSLOT', key));
}

test('kill -9 of a master under load: every queue keeps working and nothing acknowledged elsewhere is lost', async () => {
  const prefix = uniquePrefix();
  const producerClient = cluster.client();
  const workerClient = cluster.client();
  const names = [...Array.from({ length: 12 }, (_, i) => `fq-${i}`), 'fq-bounded'];
  const ledger = new Ledger();
  const completed = new Map<string, number[]>(names.map((n) => [n, []]));
  const producers = new Map<string, Queue<number>>();
  for (const name of names) {
    const bounded = name === 'fq-bounded' ? { bound: 40, groupConcurrency: 2 } : {};
    const p = new Queue<number>(name, { connection: producerClient, prefix, ...bounded });
    const q = new Queue<number>(name, { connection: workerClient, prefix, ...bounded });
    producers.set(name, p);
    const w = new Worker(q, ledgered(ledger, async () => new Promise((r) => setTimeout(r, 2))), { concurrency: 2, leaseMs: 3000, blockMs: 1000 });
    recordAnswers(ledger, w.events);
    w.events.subscribe((e) => e.type === 'completed' && completed.get(name)!.push(Date.now()));
    closers.push(() => p.close(), () => q.close(), () => w.close({ drainTimeoutMs: 0 }));
  }
  const sweeping = setInterval(() => {
    for (const p of producers.values()) void p.sweep().catch(() => undefined);
  }, 500);
  closers.push(async () => clearInterval(sweeping));

  let stop = false;
  // where the producer is, for the report of a queue that stopped (one producer adds to all in turn)
  const producerAt = { name: '', since: 0, tries: 0, lastError: '' };
  const produce = async () => {
    for (let i = 0; !stop; i++) {
      for (const [name, p] of producers) {
        if (stop) break;
        const jobId = `${name}.${i}`;
        const opts = name === 'fq-bounded' ? { jobId, group: `g${i % 5}`, waitMs: 2000 } : { jobId };
        Object.assign(producerAt, { name: jobId, since: Date.now(), tries: 0, lastError: '' });
        for (;;) {
          producerAt.tries += 1;
          try {
            await p.add(i, opts);
            ledger.record({ k: 'added', job: jobId, at: Date.now() });
            break;
          } catch (err) {
            producerAt.lastError = String(err);
            if (stop) break;
            await new Promise((r) => setTimeout(r, 50)); // failing over: the same jobId again
          }
        }
      }
    }
  };
  const producing = produce();
  // runs first (closers run last-in first-out): a failed test stops its producers too
  closers.push(async () => {
    stop = true;
    await producing;
  });
  await until(() => [...completed.values()].every((c) => c.length >= 5), 'every queue to complete jobs');

  // the victim: the master of the first queue's slot
  const slots = new Map<string, number>();
  for (const name of names) slots.set(name, await slotOf(producerClient, `{${prefix}:${name}}`));
  const victim = await cluster.masterOfSlot(slots.get(names[0]!)!);
  const victimQueues = new Set<string>();
  for (const name of names) if ((await cluster.masterOfSlot(slots.get(name)!)) === victim) victimQueues.add(name);
  const killedAt = Date.now();
  const promoted: ClusterNode = await cluster.failOver(victim);
  expect(promoted).not.toBe(victim);

  // the promoted replica already has the function library (FUNCTION LOAD replicates)
  const onPromoted = new Redis({ host: promoted.host, port: promoted.port });
  try {
    const libraries = (await onPromoted.call('FUNCTION', 'LIST')) as unknown[][];
    expect(libraries.map((l) => String(l[1]))).toEqual(expect.arrayContaining([expect.stringMatching(/^relq_[0-9a-f]{12}$/)]));
  } finally {
    onPromoted.disconnect();
  }

  const resumeMs = new Map<string, number>();
  await until(() => {
    for (const [name, times] of completed) {
      const t = times.find((x) => x > killedAt);
      if (t !== undefined && !resumeMs.has(name)) resumeMs.set(name, t - killedAt);
    }
    return resumeMs.size === names.length;
  }, 'every queue to complete a job after the failover');
  const marks = new Map([...completed].map(([n, t]) => [n, t.length]));
  try {
    await until(() => [...completed].every(([n, t]) => t.length >= marks.get(n)! + 5), 'every queue to keep going');
  } catch (err) {
    // what stopped: each queue's jobs done since, its counts, and where the producer waits
    const rows = await Promise.all(
      names.map(async (n) => `${n}${victimQueues.has(n) ? ' (killed master)' : ''}: +${completed.get(n)!.length - marks.get(n)!} done, ${JSON.stringify(await producers.get(n)!.counts().catch((e) => String(e)))}`),
    );
    console.log(`a queue stopped after the failover:\n${rows.join('\n')}\nproducer at ${producerAt.name} for ${Date.now() - producerAt.since} ms, ${producerAt.tries} tries, last error ${producerAt.lastError}`);
    throw err;
  }
  stop = true;
  await producing;
  await until(async () => {
    for (const p of producers.values()) {
      const c = await p.counts();
      if (c.pending + c.working + c.delayed > 0) return false;
    }
    return true;
  }, 'every queue to drain');

  const queueOf = (jobId: string) => producers.get(jobId.slice(0, jobId.lastIndexOf('.')))!;
  const result = await audit(ledger.entries, async (id) => (await queueOf(id).getJob(id))?.state ?? null);
  const lostOnSurvivors = result.lost.filter((id) => !victimQueues.has(id.slice(0, id.lastIndexOf('.'))));
  console.log(
    `cluster failover: ${names.length} queues (${victimQueues.size} on the killed master), jobs ${result.jobs}, ` +
      `lost ${result.lost.length} (${lostOnSurvivors.length} on surviving masters), stale acks accepted ${result.staleAcksAccepted.length}, ` +
      `duplicate deliveries ${result.duplicateDeliveries}, slowest resume ${(Math.max(...resumeMs.values()) / 1000).toFixed(2)} s`,
  );
  expect(victimQueues.size).toBeGreaterThan(0);
  for (const [name, ms] of resumeMs) expect({ name, ms: ms < 10_000 }).toEqual({ name, ms: true });
  expect(lostOnSurvivors).toEqual([]);
  expect(result.staleAcksAccepted).toEqual([]);
}, 180_000);

test('a Worker and an events subscription made after the seed master failed over use the current nodes', async () => {
  const probe = cluster.client();
  const prefix = uniquePrefix();
  // a queue whose master still has a replica (the first test used up one)
  let name = '';
  let seed: ClusterNode | undefined;
  for (let i = 0; !seed; i++) {
    name = `after-failover-${i}`;
    const master = await cluster.masterOfSlot(await slotOf(probe, `{${prefix}:${name}}`));
    if ((await cluster.replicasOf(master)) > 0) seed = master;
  }
  // A client whose only seed node, and the only node it has talked to, is the queue's master,
  // which is about to fail: it has no connection left to a node that is up. (Its ready check
  // would talk to a random master: without it, that is so in every run, not in one of three.)
  const client = cluster.client([{ host: seed.host, port: seed.port }], { enableReadyCheck: false });
  await client.exists(`{${prefix}:${name}}`);
  const promoted = await cluster.failOver(seed);
  const onPromoted = new Redis({ host: promoted.host, port: promoted.port });
  closers.push(async () => onPromoted.disconnect());

  const producer = new Queue<number, number>(name, { connection: client, prefix });
  const consumer = new Queue<number, number>(name, { connection: client, prefix });
  closers.push(() => producer.close(), () => consumer.close());
  // the subscription first, before any command: its connection comes from the nodes the client knows
  const completed: Array<string | undefined> = [];
  const events = producer.events().subscribe((e) => e.type === 'completed' && completed.push(e.id));
  closers.push(async () => events.unsubscribe());
  const w = new Worker(consumer, async (job) => job.data * 2, { concurrency: 1, blockMs: 15_000 });
  closers.push(() => w.close({ drainTimeoutMs: 0 }));
  const ids = [(await producer.add(0)).id]; // through the failover's MOVED / CLUSTERDOWN answers once
  await until(async () => (await producer.counts()).completed === 1, 'the first job');
  const took: number[] = [];
  for (let i = 1; i <= 5; i++) {
    const t0 = Date.now();
    const { id } = await producer.add(i);
    ids.push(id);
    expect(await producer.waitForResult(id, { timeoutMs: 30_000 })).toBe(i * 2);
    took.push(Date.now() - t0);
  }
  await until(() => completed.length === ids.length, 'the completed event of every job');
  expect(completed).toEqual(ids);
  // idle now, blocked on the node that serves the queue, not waiting for a node to answer
  await until(async () => (await blockedPopIds(onPromoted)).length === 1, 'the idle worker blocked on the promoted master');
  const t0 = Date.now();
  await w.close({ drainTimeoutMs: 0 });
  const closeMs = Date.now() - t0;
  console.log(
    `after the seed failover, each add completed in ${took.map((t) => `${(t / 1000).toFixed(2)} s`).join(', ')}; ` +
      `the idle worker closed in ${(closeMs / 1000).toFixed(2)} s`,
  );
  // Woken by each add, not at the end of its 15 s block (nor by the 18 s watchdog), on a
  // blocking connection to the current nodes, which a close ends at once.
  for (const t of took) expect(t).toBeLessThan(5000);
  expect(closeMs).toBeLessThan(5000);
}, 120_000);

test('a master lost without a replica: the cluster is down, and calls fail with a retryable ConnectionError (CLUSTERDOWN)', async () => {
  const client = cluster.client();
  const prefix = uniquePrefix();
  // one queue on a master without a replica (the failovers above used those up), one elsewhere
  const names = Array.from({ length: 40 }, (_, i) => `down-${i}`);
  const masters = await Promise.all(names.map(async (n) => cluster.masterOfSlot(await slotOf(client, `{${prefix}:${n}}`))));
  const lone = masters.find((m, i) => masters.indexOf(m) === i && masters.some((o) => o !== m));
  let victim: ClusterNode | undefined;
  for (const m of new Set(masters)) if (!victim && (await cluster.replicasOf(m)) === 0) victim = m;
  expect(lone).toBeDefined();
  expect(victim).toBeDefined();
  const survivorName = names[masters.findIndex((m) => m !== victim)]!;
  const q = new Queue<number>(survivorName, { connection: client, prefix });
  closers.push(() => q.close());
  await q.add(1);
  await cluster.kill(victim!);
  // the other masters mark it failed after the node timeout; the cluster stops serving
  await until(async () => (await cluster.state()) === 'fail', 'cluster_state:fail');
  const err = (await q.add(2).catch((e: unknown) => e)) as Error & { retryable?: boolean; code?: string };
  expect(err).toBeInstanceOf(ConnectionError);
  expect(err).toMatchObject({ code: 'RELQ_CONNECTION', retryable: true });
  expect(err.message).toMatch(/CLUSTERDOWN|Too many Cluster redirections/);
}, 60_000);
