/**
 * What partitions buy on a Redis Cluster: `npm run bench -- --partitions [--n 20000] [--reps 3]`
 * (docs/scale-out.md "How it is measured"). On a private Cluster of 3 masters (no replicas),
 * one hot queue is filled with `addBulk` and drained by one Worker (concurrency 50), as a plain
 * Queue, as a PartitionedQueue of 1 partition and of 6. Each master's Redis work is read from
 * INFO commandstats (µs spent executing commands, reset before each round): per job on each
 * master (busiest first), the busiest master's, the total, and the commands per job. On two cores wall-clock throughput cannot show
 * the scaling; the busiest master's share bounds it (a master is one core). Then an idle worker
 * of each, commands per master over 10 s. Prints the medians; writes nothing.
 */
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { PartitionedQueue, Queue, Worker } from '../lib/index.js';
import { startRedisServer, type RedisServer } from '../tools/redis-server.js';

const run = promisify(execFile);
const { values: a } = parseArgs({ options: { n: { type: 'string', default: '20000' }, reps: { type: 'string', default: '3' } } });
const n = Number(a.n);
const reps = Number(a.reps);
const CONCURRENCY = 50;
const IDLE_MS = 10_000;

type Kind = 'plain' | 'partitions 1' | 'partitions 6';
const KINDS: Kind[] = ['plain', 'partitions 1', 'partitions 6'];

interface Round {
  /** µs executing commands per job, per master (in port order). */
  perMaster: number[];
  /** Commands per job, all masters. */
  calls: number;
  jobsPerSec: number;
}

const servers: RedisServer[] = [];
let client: Cluster | undefined;
try {
  for (let i = 0; i < 3; i++) {
    servers.push(
      await startRedisServer({
        args: (port, dir) => ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', `${dir}/nodes.conf`],
      }),
    );
  }
  await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `${s.host}:${s.port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 });
  client = new Cluster(servers.map((s) => ({ host: s.host, port: s.port })));
  await waitClusterOk(client);
  const ports = servers.map((s) => s.port).sort((x, y) => x - y);
  console.log(`partition share: ${n} jobs per round, concurrency ${CONCURRENCY}, ${reps} reps, 3 masters (ports ${ports.join(', ')})`);

  const results = new Map<Kind, Round[]>(KINDS.map((k) => [k, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const kind of KINDS) results.get(kind)!.push(await round(client, kind, `r${rep}`));
  }
  const base = median(results.get('plain')!.map((r) => sum(r.perMaster)));
  const single = median(results.get('partitions 1')!.map((r) => sum(r.perMaster)));
  console.log('\n| queue | µs per job on each master, busiest first | busiest master | total | total / plain | busiest / 1 partition | commands per job | jobs/s |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const kind of KINDS) {
    const rs = results.get(kind)!;
    // each round's masters, busiest first: a plain queue's master changes with its prefix
    const per = [0, 1, 2].map((m) => median(rs.map((r) => [...r.perMaster].sort((x, y) => y - x)[m]!)));
    const busiest = median(rs.map((r) => Math.max(...r.perMaster)));
    const total = median(rs.map((r) => sum(r.perMaster)));
    const rate = median(rs.map((r) => r.jobsPerSec));
    const calls = median(rs.map((r) => r.calls));
    console.log(`| ${kind} | ${per.map((x) => x.toFixed(1)).join(' / ')} | ${busiest.toFixed(1)} | ${total.toFixed(1)} | ${(total / base).toFixed(2)} | ${(busiest / single).toFixed(2)} | ${calls.toFixed(2)} | ${Math.round(rate)} |`);
  }
  console.log('\nidle worker, commands per master in 10 s (plain / partitions 6):');
  for (const kind of ['plain', 'partitions 6'] as const) console.log(`${kind}: ${(await idle(client, kind)).join(' / ')}`);
} finally {
  client?.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
}

async function waitClusterOk(c: Cluster): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const infos = await Promise.all(servers.map(async (s) => (await run('redis-cli', ['-p', String(s.port), 'cluster', 'info'])).stdout));
    if (infos.every((x) => x.includes('cluster_state:ok'))) {
      await c.ping();
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the cluster never became ok');
}

function make(c: Cluster, kind: Kind, prefix: string): Queue<number> | PartitionedQueue<number> {
  const options = { connection: c, prefix, evictionCheck: 'off' as const };
  if (kind === 'plain') return new Queue<number>('hot', options);
  return new PartitionedQueue<number>('hot', { ...options, partitions: Number(kind.split(' ')[1]) });
}

/** Commands and µs spent executing them on each master since the last reset, in port order (the harness's own left out). */
async function commandStats(): Promise<Array<{ calls: number; usec: number }>> {
  const out: Array<{ calls: number; usec: number }> = [];
  for (const s of [...servers].sort((x, y) => x.port - y.port)) {
    const { stdout } = await run('redis-cli', ['-p', String(s.port), 'info', 'commandstats']);
    const total = { calls: 0, usec: 0 };
    for (const m of stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      if (/^(info|cluster|config|ping|client|command)/.test(m[1]!)) continue;
      total.calls += Number(m[2]);
      total.usec += Number(m[3]);
    }
    out.push(total);
  }
  return out;
}

async function resetStats(): Promise<void> {
  await Promise.all(servers.map((s) => run('redis-cli', ['-p', String(s.port), 'config', 'resetstat'])));
}

async function round(c: Cluster, kind: Kind, prefix: string): Promise<Round> {
  const q = make(c, kind, `${prefix}-${kind.replace(' ', '')}`);
  try {
    await resetStats();
    for (let i = 0; i < n; i += 1000) await q.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ data: i + k })));
    let done = 0;
    let finished!: () => void;
    const all = new Promise<void>((resolve) => (finished = resolve));
    const start = performance.now();
    const w = new Worker<number>(q, async () => {
      if (++done === n) finished();
    }, { concurrency: CONCURRENCY });
    await all;
    const secs = (performance.now() - start) / 1000;
    await w.close();
    const stats = await commandStats();
    return { perMaster: stats.map((x) => x.usec / n), calls: sum(stats.map((x) => x.calls)) / n, jobsPerSec: n / secs };
  } finally {
    await q.close();
  }
}

async function idle(c: Cluster, kind: 'plain' | 'partitions 6'): Promise<number[]> {
  const q = make(c, kind, `idle-${kind.replace(' ', '')}`);
  const w = new Worker<number>(q, async () => undefined);
  try {
    await new Promise((r) => setTimeout(r, 1_000));
    const calls = async () =>
      Promise.all(
        [...servers].sort((x, y) => x.port - y.port).map(async (s) => {
          const { stdout } = await run('redis-cli', ['-p', String(s.port), 'info', 'commandstats']);
          let total = 0;
          for (const m of stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (!/^(info|cluster|config|ping|client|command)/.test(m[1]!)) total += Number(m[2]);
          return total;
        }),
      );
    const before = await calls();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const after = await calls();
    return after.map((x, i) => x - before[i]!);
  } finally {
    await w.close();
    await q.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

function sum(xs: number[]): number {
  return xs.reduce((x, y) => x + y, 0);
}
