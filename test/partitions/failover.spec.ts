/**
 * A partitioned queue on a Cluster of 3 masters + 3 replicas when one master is killed (-9)
 * mid-run (docs/scale-out.md, "Failures"): its partitions stall until its replica takes over
 * and then resume within 10 s; the partitions on the other masters never stop, their jobs
 * completing all through the failover in the same worker, and a plain queue on another master
 * never fails an add; nothing acknowledged on them is lost and no stale ack is accepted anywhere.
 */
import { Redis } from 'ioredis';
import { PartitionedQueue, Queue, Worker } from '../../lib/index.js';
import { Ledger, audit, ledgered, recordAnswers } from '../support/ledger.js';
import { useCluster } from '../support/cluster.js';
import { waitUntil } from '../support/wait.js';

const env = useCluster(3, 1);
const until = (cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) => waitUntil(cond, what, timeoutMs, 20);

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});

const PREFIX = 'pfo';
const PARTITIONS = 6;

/** The port of the master that holds keys starting with `prefix`. */
async function masterOf(prefix: string): Promise<number | undefined> {
  for (const node of env.client.nodes('master')) if (((await node.keys(`${prefix}*`)) as string[]).length > 0) return node.options.port;
  return undefined;
}

/** The master's port that holds each partition's keys. */
async function mastersOfPartitions(name: string): Promise<number[]> {
  const owner = new Array<number>(PARTITIONS).fill(0);
  for (const node of env.client.nodes('master')) {
    const keys = (await node.keys(`{${PREFIX}:{${name}#*`)) as string[];
    for (const key of keys) {
      const m = /#(\d+)(?:\.\d+)?\}/.exec(key);
      if (m) owner[Number(m[1])] = node.options.port!;
    }
  }
  return owner;
}

beforeAll(async () => {
  // Redis stops every master while a slot is uncovered (cluster-require-full-coverage yes, its
  // default), between the node timeout and the promotion: the others can go on only without it.
  for (const n of env.cluster.nodes) {
    const r = new Redis({ host: n.host, port: n.port });
    await r.config('SET', 'cluster-require-full-coverage', 'no').finally(() => r.disconnect());
  }
});

test('kill -9 of a master: its partitions resume within 10 s, the others never stop, nothing acknowledged is lost', async () => {
  const name = 'hot';
  const producer = new PartitionedQueue<number>(name, { connection: env.cluster.client(), prefix: PREFIX, partitions: PARTITIONS });
  const away: string[] = []; // the worker's warnings, for the report
  let killedAt = 0;
  const consumer = new PartitionedQueue<number>(name, {
    connection: env.cluster.client(),
    prefix: PREFIX,
    partitions: PARTITIONS,
    onWarning: (w) => away.push(`${Date.now() - killedAt} ms: ${w.message}`),
  });
  closers.push(() => producer.close(), () => consumer.close());
  const ledger = new Ledger();
  const completed: number[][] = Array.from({ length: PARTITIONS }, () => []);
  const partitionOfJob = (id: string) => Number(id.split(':')[0]);
  const worker = new Worker<number>(consumer, ledgered(ledger, async () => new Promise((r) => setTimeout(r, 2))), { concurrency: 6, leaseMs: 3000, blockMs: 1000 });
  recordAnswers(ledger, worker.events);
  worker.events.subscribe((e) => e.type === 'completed' && completed[partitionOfJob(e.job.id)]!.push(Date.now()));
  worker.start();
  closers.push(() => worker.close({ drainTimeoutMs: 0 }));
  const sweeping = setInterval(() => void producer.sweep().catch(() => undefined), 500);
  closers.push(async () => clearInterval(sweeping));

  // One producer loop per partition, each adding jobs whose id routes to it: a loop waiting on
  // the killed master stalls its own partition only.
  const keys = Array.from({ length: PARTITIONS }, (_, p) => Array.from({ length: 4000 }, (_, k) => `k${k}`).filter((k) => producer.partitionOf({ partitionKey: `${p}:${k}` }) === p));
  let stop = false;
  const produce = async (p: number) => {
    for (let i = 0; !stop; i++) {
      const jobId = `${p}:${keys[p]![i % keys[p]!.length]}.${i}`;
      for (;;) {
        try {
          await producer.add(i, { jobId, partitionKey: `${p}:${keys[p]![i % keys[p]!.length]}` });
          ledger.record({ k: 'added', job: jobId, at: Date.now() });
          break;
        } catch {
          if (stop) return;
          await new Promise((r) => setTimeout(r, 50)); // failing over: the same jobId again
        }
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const producing = Promise.all(Array.from({ length: PARTITIONS }, (_, p) => produce(p)));
  closers.push(async () => {
    stop = true;
    await producing;
  });
  await until(() => completed.every((c) => c.length >= 5), 'every partition to complete jobs');

  const owners = await mastersOfPartitions(name);
  const victim = env.cluster.nodes.find((n) => n.port === owners[0])!;
  const onVictim = owners.map((port, p) => (port === victim.port ? p : -1)).filter((p) => p >= 0);
  const others = owners.map((_, p) => p).filter((p) => !onVictim.includes(p));
  expect(onVictim.length).toBe(2); // two partitions per master
  // A plain queue on another master, added to all through the failover: none of its adds fails
  // (the library check that every call made after a node's connection closed read every
  // master, the dead one too, and failed them all).
  let plain: Queue<number> | undefined;
  for (let k = 0; !plain; k++) {
    const q = new Queue<number>(`plain-${k}`, { connection: env.client, prefix: PREFIX });
    await q.add(0);
    if ((await masterOf(`{${PREFIX}:plain-${k}}`)) !== victim.port) plain = q;
    else await q.close();
  }
  closers.push(() => plain!.close());
  const plainErrors: string[] = [];
  const plainAdds: number[] = [];
  const plainLoop = (async () => {
    while (!stop) {
      await plain.add(1).then(() => plainAdds.push(Date.now()), (err: unknown) => void plainErrors.push(String(err)));
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  killedAt = Date.now();
  const promoted = await env.cluster.failOver(victim);
  const promotedAt = Date.now();
  expect(promoted.port).not.toBe(victim.port);

  // every partition completes jobs after the promotion; the killed master's within 10 s of the kill
  const resumeMs = new Map<number, number>();
  await until(() => {
    completed.forEach((times, p) => {
      const t = times.find((x) => x > promotedAt);
      if (t !== undefined && !resumeMs.has(p)) resumeMs.set(p, t - killedAt);
    });
    return resumeMs.size === PARTITIONS;
  }, 'every partition to complete a job after the kill');
  // the others never stopped: no gap in their completions from the kill until the failover ended
  const windowEnd = Math.max(promotedAt, killedAt + 3000);
  const longestGap = (times: number[]) => {
    const inWindow = [killedAt, ...times.filter((t) => t > killedAt && t < windowEnd), windowEnd];
    return Math.max(...inWindow.slice(1).map((t, k) => t - inWindow[k]!));
  };
  await until(() => completed.every((c) => c.at(-1)! > windowEnd + 500), 'every partition to go on after the failover');
  stop = true;
  await producing;
  await plainLoop;
  await until(async () => {
    const c = await producer.counts();
    return c.pending + c.working + c.delayed === 0;
  }, 'the queue to drain');

  const gaps = others.map((p) => longestGap(completed[p]!));
  const result = await audit(ledger.entries, async (id) => (await producer.getJob(id))?.state ?? null);
  const lostElsewhere = result.lost.filter((id) => others.includes(partitionOfJob(id)));
  console.log(
    `partitioned failover: partitions ${onVictim.join(',')} on the killed master, failover ${promotedAt - killedAt} ms, ` +
      `resume ${[...resumeMs].map(([p, ms]) => `${p}:${ms}`).join(' ')} ms, longest gap of the others ${Math.max(...gaps)} ms, ` +
      `gaps ${gaps.join(' ')} ms\n${away.join('\n')}\n` +
      `jobs ${result.jobs}, lost ${result.lost.length} (${lostElsewhere.length} elsewhere), duplicate deliveries ${result.duplicateDeliveries}, ` +
      `completed twice ${result.completedTwice.length}, stale acks accepted ${result.staleAcksAccepted.length}, plain queue: ${plainAdds.length} adds, longest gap ${longestGap(plainAdds)} ms, failed ${plainErrors.length} ${plainErrors.slice(0, 2).join(' | ')}`,
  );
  for (const p of onVictim) expect({ p, resumed: resumeMs.get(p)! < 10_000 }).toEqual({ p, resumed: true });
  for (const [k, p] of others.entries()) expect({ p, gapUnder2s: gaps[k]! < 2000 }).toEqual({ p, gapUnder2s: true });
  expect(lostElsewhere).toEqual([]);
  expect(plainErrors).toEqual([]);
  expect(longestGap(plainAdds)).toBeLessThan(2000); // it never stopped either
  expect(result.staleAcksAccepted).toEqual([]);
  expect(result.completedTwice).toEqual([]);
}, 120_000);
