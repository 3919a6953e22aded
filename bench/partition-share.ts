/**
 * What partitions buy on a Redis Cluster: `npm run bench -- --partitions [--n 20000] [--reps 3] [--counts 6,20,60]`
 * (docs/scale-out.md "How it is measured"). On a private Cluster of 3 masters (no replicas),
 * one hot queue is filled with `addBulk` and drained by one Worker (concurrency 50), as a plain
 * Queue, as a PartitionedQueue of 1 partition and of 6 (or each of `--counts`: the total work per
 * job as partitions grow, for the model of more masters in bench/RESULTS.md). Each master's Redis
 * work is its server's CPU time over the round (INFO cpu, fill and drain): per job on each master
 * (busiest first), the busiest master's, the total, and the calls per job. On two cores wall-clock throughput cannot show
 * the scaling; the busiest master's share bounds it (a master is one core). Then an idle worker
 * of each, commands per master over 10 s. Prints the medians; writes nothing.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { PartitionedQueue, Queue, Worker } from '../lib/index.js';
import { startRedisServer, type RedisServer } from '../tools/redis-server.js';

const run = promisify(execFile);
const { values: a } = parseArgs({
  options: { n: { type: 'string', default: '20000' }, reps: { type: 'string', default: '3' }, counts: { type: 'string', default: '6' }, instructions: { type: 'boolean', default: false } },
});
/**
 * `--instructions`: each master runs under valgrind (callgrind, its clients' commands counted), and
 * its work is the instructions it executed, in thousands per job. On two cores the masters and
 * Node share the CPU: with every master busy (a partitioned queue), each command takes longer
 * than with one busy (a plain queue), and CPU time charges the partitioned queue for that;
 * instruction counts do not depend on it.
 */
const instructions = a.instructions;
/**
 * What is counted: reading, parsing and running the clients' commands (scripts and all), and
 * writing their replies; not the server's timers (serverCron, the cluster bus), whose work per
 * job grows with how slowly valgrind runs.
 */
const COLLECT = ['readQueryFromClient', 'handleClientsWithPendingWrites', 'writeToClient'];
const n = Number(a.n);
const reps = Number(a.reps);
const CONCURRENCY = 50;
const IDLE_MS = 10_000;
/** Each server's instructions of the dumps read so far (a dump holds those since the last one). */
const dumped = new Map<number, number>();

type Kind = 'plain' | `partitions ${number}`;
const KINDS: Kind[] = ['plain', 'partitions 1', ...a.counts.split(',').map((c): Kind => `partitions ${Number(c)}`)];

interface Round {
  /** Redis CPU µs per job, per master (in port order). */
  perMaster: number[];
  /** Calls per job from clients, all masters. */
  calls: number;
  jobsPerSec: number;
}

const servers: RedisServer[] = [];
let client: Cluster | undefined;
try {
  for (let i = 0; i < 3; i++) {
    const serverArgs = (port: number, dir: string) => ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', `${dir}/nodes.conf`];
    servers.push(
      await startRedisServer(
        instructions
          ? { bin: 'valgrind', args: (port, dir) => ['--tool=callgrind', ...COLLECT.map((f) => `--toggle-collect=${f}`), `--callgrind-out-file=${dir}/cg.out`, 'redis-server', ...serverArgs(port, dir)] }
          : { args: serverArgs },
      ),
    );
  }
  await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `${s.host}:${s.port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 });
  client = new Cluster(servers.map((s) => ({ host: s.host, port: s.port })));
  await waitClusterOk(client);
  const ports = servers.map((s) => s.port).sort((x, y) => x - y);
  console.log(`partition share: ${n} jobs per round, concurrency ${CONCURRENCY}, ${reps} reps, 3 masters (ports ${ports.join(', ')})${instructions ? ', work in thousands of instructions per job (callgrind)' : ', work in Redis CPU µs per job'}`);

  // relq's function library loaded and read on every master before any round (a first call does it)
  const warm = new Queue<number>('warm', { connection: client, prefix: 'warm' });
  await warm.add(0);
  await warm.close();
  const results = new Map<Kind, Round[]>(KINDS.map((k) => [k, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const kind of KINDS) results.get(kind)!.push(await round(client, kind, `r${rep}`));
  }
  const base = median(results.get('plain')!.map((r) => sum(r.perMaster)));
  const single = median(results.get('partitions 1')!.map((r) => sum(r.perMaster)));
  console.log('\n| queue | work per job on each master, busiest first | busiest master | total | total / plain | busiest / 1 partition | calls per job | jobs/s |');
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
  // valgrind removes its pipes in the temp dir when the server exits by itself, not when killed
  if (instructions) await Promise.all(servers.map((s) => shutDown(s)));
  await Promise.all(servers.map((s) => s.stop()));
}

async function shutDown(s: RedisServer): Promise<void> {
  await run('redis-cli', ['-p', String(s.port), 'shutdown', 'nosave']).catch(() => undefined);
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(s.pid, 0);
    } catch {
      return; // gone
    }
    await new Promise((r) => setTimeout(r, 50));
  }
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

/**
 * Each master's CPU seconds so far (INFO cpu: used_cpu_user + used_cpu_sys of the server
 * process: commands, scripts, networking and all) and the calls clients sent it (FCALL,
 * EVALSHA and blocking pops: the commands a script runs are counted apart by Redis, and their
 * time is inside the script's), in port order.
 */
async function masterStats(phase: 'before' | 'after'): Promise<Array<{ calls: number; cpu: number }>> {
  const out: Array<{ calls: number; cpu: number }> = [];
  for (const s of [...servers].sort((x, y) => x.port - y.port)) {
    // Under callgrind the INFO call itself is left out of the round: read before the first dump, after the last.
    const dumpFirst = instructions && phase === 'after' ? await instructionsOf(s) : 0;
    const { stdout } = await run('redis-cli', ['-p', String(s.port), 'info', 'all']);
    const cpu = instructions
      ? (phase === 'after' ? dumpFirst : await instructionsOf(s)) / 1e9 // thousands per job below, as µs are for CPU seconds
      : Number(/^used_cpu_user:([\d.]+)/m.exec(stdout)![1]) + Number(/^used_cpu_sys:([\d.]+)/m.exec(stdout)![1]);
    let calls = 0;
    for (const m of stdout.matchAll(/^cmdstat_(fcall|fcall_ro|evalsha|evalsha_ro|blpop):calls=(\d+)/gm)) calls += Number(m[2]);
    out.push({ calls, cpu });
  }
  return out;
}

/** The instructions a server under callgrind executed so far: a dump, read back. */
async function instructionsOf(s: RedisServer): Promise<number> {
  const before = new Set(readdirSync(s.dir));
  await run('callgrind_control', ['-d', String(s.pid)]);
  for (let i = 0; i < 200; i++) {
    const file = readdirSync(s.dir).find((f) => f.startsWith('cg.out') && !before.has(f));
    if (file) {
      const text = readFileSync(join(s.dir, file), 'utf8');
      const total = /^(?:summary|totals): (\d+)/m.exec(text);
      if (total) {
        rmSync(join(s.dir, file));
        dumped.set(s.port, (dumped.get(s.port) ?? 0) + Number(total[1]));
        return dumped.get(s.port)!;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no callgrind dump of the server on port ${s.port}`);
}

async function round(c: Cluster, kind: Kind, prefix: string): Promise<Round> {
  const q = make(c, kind, `${prefix}-${kind.replace(' ', '')}`);
  try {
    const before = await masterStats('before');
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
    const after = await masterStats('after');
    return {
      perMaster: after.map((x, i) => ((x.cpu - before[i]!.cpu) * 1e6) / n),
      calls: sum(after.map((x, i) => x.calls - before[i]!.calls)) / n,
      jobsPerSec: n / secs,
    };
  } finally {
    await q.close();
  }
}

async function idle(c: Cluster, kind: Kind): Promise<number[]> {
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
