/**
 * The chaos run: real worker processes (engine Workers, a lease-API loop, a Nest application)
 * and producers work one queue on a private redis-server with `appendfsync always`, most of
 * them through a fault proxy, while the run injects faults:
 *   - SIGKILL of a random worker every 2 s, and a replacement;
 *   - SIGSTOP of one worker of each kind while it holds leases (the lease-API loop, an engine
 *     Worker of concurrency 1 whose jobs outlast a heartbeat, one of higher concurrency, the
 *     Nest application) for longer than the lease, then SIGCONT: each must lease again within
 *     5 s, and acks for jobs swept or leased again meanwhile must be refused;
 *   - kill -9 of redis-server, and a restart on the same port and data dir;
 *   - CLIENT KILL of every client;
 *   - proxy latency, replies dropped after the command ran, and half-open connections.
 * Every process writes a ledger (test/support/ledger.ts); the audit at the end reads every job
 * back. Used by `npm run chaos` (test/chaos/main.ts) and by a short run in `npm test`.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Queue } from '../../lib/index.js';
import { buildEngine, type BuiltEngine } from '../support/engine-child.js';
import { LedgerTail, audit, type AuditResult, type LedgerEntry } from '../support/ledger.js';
import { startProxy, type FaultProxy } from '../support/proxy.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { settledWithin } from '../support/wait.js';

export interface ChaosOptions {
  /** Length of the fault phase. */
  durationMs: number;
  /** Engine Worker processes (a lease-API worker and a Nest application run besides). */
  workers: number;
  /** Jobs the producers add over the fault phase. */
  jobs: number;
  /** Jobs each worker runs at once. */
  concurrency: number;
  /** Lease length of every worker. */
  leaseMs: number;
  /** Progress lines. */
  log(line: string): void;
}

export interface ChaosReport extends AuditResult {
  faults: Record<string, number>;
  duplicateBound: number;
  /** Seconds until every worker leased again after the Redis restart / the client kill. */
  resumeAfterRestartS: number;
  resumeAfterClientKillS: number;
  /** Acks of the stopped workers refused after SIGCONT. */
  refusedAfterStop: number;
  /** Seconds from SIGCONT until each stopped worker leased again, by kind (Infinity: it did not within 15 s). */
  resumeAfterStopS: Record<string, number>;
  failures: string[];
  pass: boolean;
  summary: string;
}

type Role = 'engine' | 'lease' | 'nest';

/** What a worker process is; a killed one is replaced by one of the same kind. */
interface Kind {
  name: string;
  role: Role;
  concurrency: number;
  /** Each job's run, "min-max" ms (engine workers). */
  workMs?: string;
}

interface Proc {
  kind: Kind;
  child: ChildProcess;
  stopped: boolean;
}

const FIXTURES = ['test/chaos/fixtures/worker.ts', 'test/chaos/fixtures/producer.ts', 'test/chaos/fixtures/nest-worker.ts', 'test/support/ledger.ts'];
const QUEUE = 'chaos';
/** A fault whose recovery is measured is given this long without worker kills. */
const QUIET_MS = 8000;
const RESUME_LIMIT_S = 5;
/** How long each proxy fault lasts (a fault of its own length, not a wait for a condition). */
const PROXY_FAULT_MS = 3000;
/** How long redis-server stays down between its kill -9 and the restart. */
const REDIS_DOWN_MS = 300;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const dir = mkdtempSync(join(tmpdir(), 'relq-chaos-'));
  const ledgerFile = join(dir, 'ledger.jsonl');
  const prefix = uniquePrefix();
  const procs = new Set<Proc>();
  const producers: ChildProcess[] = [];
  const faults: Record<string, number> = { workerKills: 0, workerStops: 0, redisRestarts: 0, clientKills: 0, halfOpen: 0, latency: 0, droppedReplies: 0 };
  let built: BuiltEngine | undefined;
  let redis: TestRedis | undefined;
  let proxy: FaultProxy | undefined;
  let admin: Redis | undefined;
  let observer: Queue<number, string> | undefined;
  const timers: NodeJS.Timeout[] = [];
  let stopping = false;
  try {
    built = buildEngine(FIXTURES);
    redis = await startRedis({ appendfsync: 'always' });
    proxy = await startProxy(redis);
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    observer = new Queue<number, string>(QUEUE, { connection: redis.url, prefix });
    const fixture = (name: string) => join(built!.root, 'test', 'chaos', 'fixtures', `${name}.js`);
    const env = (extra: Record<string, string | number>) => ({
      ...process.env,
      CHAOS_LEDGER: ledgerFile,
      CHAOS_QUEUE: QUEUE,
      CHAOS_PREFIX: prefix,
      CHAOS_CONCURRENCY: String(o.concurrency),
      CHAOS_LEASE_MS: String(o.leaseMs),
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])),
    });
    const ready = (child: ChildProcess, what: string) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${what} did not start within 30 s`)), 30_000);
        child.once('message', () => (clearTimeout(t), resolve()));
        child.once('exit', (code, sig) => (clearTimeout(t), reject(new Error(`${what} exited (${code ?? sig}) before it was ready`))));
      });
    // Most processes go through the proxy (its faults reach them); one engine worker and the
    // Nest app talk to Redis directly, so each path is exercised.
    let spawned = 0;
    const spawnWorker = async (kind: Kind): Promise<Proc> => {
      spawned += 1;
      const direct = kind.role === 'nest' || spawned % 3 === 0;
      const child = fork(fixture(kind.role === 'nest' ? 'nest-worker' : 'worker'), [], {
        env: env({
          CHAOS_ROLE: kind.role,
          CHAOS_REDIS: direct ? redis!.url : proxy!.url,
          CHAOS_CONCURRENCY: kind.concurrency,
          ...(kind.workMs ? { CHAOS_WORK_MS: kind.workMs } : {}),
        }),
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      const p: Proc = { kind, child, stopped: false };
      procs.add(p);
      child.once('exit', () => procs.delete(p));
      await ready(child, `${kind.name} worker`);
      return p;
    };

    // ---- start -------------------------------------------------------------------------
    // A concurrency-1 Worker whose jobs outlast the freeze below (three leases long, kept by
    // the heartbeat): after SIGCONT its heartbeat finds the lease lost while the handler still
    // runs, the path that once kept the slot for good.
    const engine: Kind = { name: 'engine', role: 'engine', concurrency: o.concurrency };
    const slowSingle: Kind = { name: 'engine c=1', role: 'engine', concurrency: 1, workMs: `${o.leaseMs * 3}-${o.leaseMs * 3.5}` };
    const leaseLoop: Kind = { name: 'lease API', role: 'lease', concurrency: o.concurrency };
    const nest: Kind = { name: 'nest', role: 'nest', concurrency: o.concurrency };
    await Promise.all([...Array.from({ length: o.workers }, () => spawnWorker(engine)), spawnWorker(slowSingle), spawnWorker(leaseLoop), spawnWorker(nest)]);
    const rate = Math.max(20, Math.round(o.jobs / (o.durationMs / 1000)));
    for (const name of ['pa', 'pb']) {
      const child = fork(fixture('producer'), [], {
        env: env({ CHAOS_REDIS: proxy.url, CHAOS_RATE: rate / 2, CHAOS_NAME: name }),
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      producers.push(child);
      child.once('exit', (code, signal) => {
        if (!stopping) o.log(`[chaos] producer ${name} exited early (${code ?? signal})`);
      });
      await ready(child, 'producer');
    }
    const sweeper = setInterval(() => void observer!.sweep().catch(() => undefined), 250);
    timers.push(sweeper);
    const t0 = Date.now();
    const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1);
    let quietUntil = 0;
    const progress = setInterval(() => {
      void observer!.counts().then(
        (c) =>
          o.log(
            `[chaos ${elapsed()} s] pending ${c.pending}, working ${c.working}, completed ${c.completed}, dead ${c.dead} | ` +
              `workers ${procs.size} | ${Object.entries(faults).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ')}`,
          ),
        () => o.log(`[chaos ${elapsed()} s] (Redis not answering)`),
      );
    }, 2000);
    timers.push(progress);

    // ---- faults --------------------------------------------------------------------------
    const killer = setInterval(() => {
      if (Date.now() < quietUntil) return;
      const candidates = [...procs].filter((p) => !p.stopped && p.child.exitCode === null);
      const victim = candidates[Math.floor(Math.random() * candidates.length)];
      if (!victim) return;
      victim.child.kill('SIGKILL');
      faults.workerKills! += 1;
      void spawnWorker(victim.kind).catch((err: unknown) => o.log(`replacement failed: ${String(err)}`));
    }, 2000);
    timers.push(killer);

    const at = async (fraction: number) => {
      const wait = t0 + o.durationMs * fraction - Date.now();
      if (wait > 0) await sleep(wait);
    };
    const tail = new LedgerTail(ledgerFile);
    const entries = () => tail.read();
    /**
     * Seconds from `since` until every worker alive throughout leased again. A worker whose
     * one slot holds a job longer than the limit may first have to finish it: its own longest
     * job is taken off its time.
     */
    const resumeOf = async (since: number, what: string): Promise<number> => {
      const running = [...procs].filter((p) => !p.stopped);
      const allowance = new Map(running.map((p) => [p.child.pid!, p.kind.concurrency === 1 && p.kind.workMs ? Number(p.kind.workMs.split('-')[1]) : 0]));
      const pids = [...allowance.keys()];
      const deadline = since + 15_000 + Math.max(...allowance.values());
      for (;;) {
        const alive = pids.filter((pid) => [...procs].some((p) => p.child.pid === pid));
        const firsts = alive.map((pid) => entries().find((e) => e.k === 'leased' && e.pid === pid && e.at > since)?.at);
        if (firsts.every((t) => t !== undefined)) {
          const s = (Math.max(since, ...firsts.map((t, i) => t! - allowance.get(alive[i]!)!)) - since) / 1000;
          o.log(`[chaos ${elapsed()} s] every worker consumed again ${s.toFixed(2)} s after the ${what}`);
          return s;
        }
        if (Date.now() > deadline) {
          const stuck = alive.filter((_, i) => firsts[i] === undefined).map((pid) => {
            const p = [...procs].find((x) => x.child.pid === pid);
            const last = entries().filter((e) => e.k !== 'added' && e.pid === pid).pop();
            return `${p?.kind.name ?? '?'} ${pid} (last ledger line: ${last ? `${last.k} ${((last.at - since) / 1000).toFixed(2)} s after` : 'none'})`;
          });
          o.log(`[chaos ${elapsed()} s] ${stuck.length} worker(s) did not consume within 15 s of the ${what}: ${stuck.join(', ')}`);
          return Infinity;
        }
        await sleep(100);
      }
    };

    // SIGSTOP one worker of each kind while it holds a lease (its last ledger line is a
    // 'leased'), all for longer than their lease, then SIGCONT. Each must lease again within
    // RESUME_LIMIT_S: a per-process check, since the fleet drains the queue without any one.
    await at(0.2);
    const holding = (pid: number) => entries().filter((e) => e.k !== 'added' && e.pid === pid).pop()?.k === 'leased';
    const frozen: Proc[] = [];
    for (const kind of [leaseLoop, slowSingle, engine, nest]) {
      const target = [...procs].find((p) => p.kind === kind && !p.stopped && p.child.exitCode === null);
      if (!target) continue;
      target.stopped = true; // the killer leaves it alone from here on
      const pid = target.child.pid!;
      for (const until = Date.now() + 10_000; !holding(pid) && Date.now() < until; ) await sleep(2);
      target.child.kill('SIGSTOP');
      // Should this process die now, a detached shell still resumes the stopped worker (whose
      // IPC channel then tells it to exit): no process is left stopped for good.
      spawn('/bin/sh', ['-c', `sleep ${Math.ceil((o.leaseMs + 15_000) / 1000)}; kill -CONT ${pid} 2>/dev/null`], { detached: true, stdio: 'ignore' }).unref();
      faults.workerStops! += 1;
      frozen.push(target);
    }
    const stoppedAt = Date.now();
    o.log(`[chaos ${elapsed()} s] SIGSTOP ${frozen.map((p) => `${p.kind.name} ${p.child.pid}`).join(', ')} for ${o.leaseMs + 2000} ms`);
    await sleep(o.leaseMs + 2000);
    quietUntil = Date.now() + QUIET_MS;
    for (const p of frozen) p.child.kill('SIGCONT');
    const contAt = Date.now();
    const resumeAfterStopS: Record<string, number> = {};
    await Promise.all(
      frozen.map(async (p) => {
        const pid = p.child.pid!;
        const leasedAgain = () => entries().find((e) => e.k === 'leased' && e.pid === pid && e.at > contAt)?.at;
        for (const until = contAt + 15_000; leasedAgain() === undefined && Date.now() < until; ) await sleep(50);
        const again = leasedAgain();
        resumeAfterStopS[p.kind.name] = again === undefined ? Infinity : (again - contAt) / 1000;
      }),
    );
    for (const p of frozen) p.stopped = false;
    const refusedAfterStop = entries().filter((e) => e.k === 'ack-result' && !e.ok && e.at > stoppedAt && frozen.some((p) => p.child.pid === e.pid)).length;
    o.log(
      `[chaos ${elapsed()} s] SIGCONT: leased again after ${Object.entries(resumeAfterStopS).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}; ` +
        `${refusedAfterStop} stale ack(s) refused`,
    );

    // kill -9 of redis-server, restart on the same port and data dir
    await at(0.4);
    quietUntil = Date.now() + QUIET_MS;
    await redis.kill();
    faults.redisRestarts! += 1;
    await sleep(REDIS_DOWN_MS);
    await redis.restart();
    const restartedAt = Date.now();
    o.log(`[chaos ${elapsed()} s] redis-server killed (-9) and restarted`);
    const resumeAfterRestartS = await resumeOf(restartedAt, 'Redis restart');

    // CLIENT KILL of every client but this one
    await at(0.6);
    quietUntil = Date.now() + QUIET_MS;
    const killedAt = Date.now();
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => undefined);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => undefined);
    faults.clientKills! += 1;
    o.log(`[chaos ${elapsed()} s] CLIENT KILL of every client`);
    const resumeAfterClientKillS = await resumeOf(killedAt, 'client kill');

    // the proxy: latency, lost replies, half-open connections
    await at(0.72);
    proxy.setLatency(40);
    faults.latency! += 1;
    await sleep(PROXY_FAULT_MS);
    proxy.setLatency(0);
    await at(0.8);
    const dropping = setInterval(() => proxy!.dropsArmed === 0 && proxy!.dropReplies(1), 100);
    await sleep(PROXY_FAULT_MS);
    clearInterval(dropping);
    faults.droppedReplies = proxy.dropped;
    await at(0.88);
    proxy.freezeAll();
    faults.halfOpen! += 1;
    o.log(`[chaos ${elapsed()} s] every proxied connection frozen (half-open)`);
    await at(1);

    // ---- drain and audit ----------------------------------------------------------------
    clearInterval(killer);
    stopping = true;
    for (const p of producers) if (p.connected) p.send({ stop: true }, () => undefined);
    await Promise.all(producers.map((p) => new Promise((r) => (p.exitCode === null ? p.once('exit', r) : r(null)))));
    o.log(`[chaos ${elapsed()} s] faults over, producers stopped; waiting for every job to complete`);
    const drainDeadline = Date.now() + 60_000;
    for (;;) {
      const c = await observer.counts().catch(() => undefined);
      if (c && c.pending + c.working + c.delayed === 0) break;
      if (Date.now() > drainDeadline) {
        o.log(`[chaos ${elapsed()} s] not drained after 60 s: ${JSON.stringify(c)}`);
        break;
      }
      await sleep(200);
    }
    clearInterval(sweeper);
    clearInterval(progress);
    for (const p of procs) p.child.kill('SIGKILL');

    const ledger: LedgerEntry[] = new LedgerTail(ledgerFile).read();
    const result = await audit(ledger, async (id) => (await observer!.getJob(id))?.state ?? null);
    const totalConcurrency = (o.workers + 2) * o.concurrency + 1;
    const duplicateBound =
      (faults.workerKills! + faults.workerStops!) * o.concurrency + (faults.halfOpen! + faults.redisRestarts! + faults.clientKills!) * totalConcurrency;
    const failures: string[] = [];
    if (result.lost.length) failures.push(`${result.lost.length} job(s) lost (e.g. ${result.lost.slice(0, 3).join(', ')})`);
    if (result.completedTwice.length) failures.push(`${result.completedTwice.length} job(s) completed twice`);
    if (result.staleAcksAccepted.length) failures.push(`${result.staleAcksAccepted.length} stale ack(s) accepted`);
    if (result.duplicateDeliveries > duplicateBound) failures.push(`duplicate deliveries ${result.duplicateDeliveries} over the bound ${duplicateBound}`);
    if (!(resumeAfterRestartS <= RESUME_LIMIT_S)) failures.push(`workers resumed ${resumeAfterRestartS} s after the Redis restart (limit ${RESUME_LIMIT_S} s)`);
    if (!(resumeAfterClientKillS <= RESUME_LIMIT_S)) failures.push(`workers resumed ${resumeAfterClientKillS} s after the client kill (limit ${RESUME_LIMIT_S} s)`);
    if (refusedAfterStop === 0) failures.push('the stopped workers had no stale ack refused: the SIGSTOP fault did not bite');
    for (const [kind, s] of Object.entries(resumeAfterStopS)) {
      if (!(s <= RESUME_LIMIT_S)) failures.push(`the ${kind} worker leased again ${s} s after SIGCONT (limit ${RESUME_LIMIT_S} s)`);
    }
    if (Object.keys(resumeAfterStopS).length < 4) failures.push(`only ${Object.keys(resumeAfterStopS).length} of 4 worker kinds were stopped`);
    if (result.jobs === 0) failures.push('no job was added');
    const summary =
      `chaos: jobs ${result.jobs}, lost ${result.lost.length}, completed twice ${result.completedTwice.length}, ` +
      `duplicate deliveries ${result.duplicateDeliveries} (bound ${duplicateBound}), stale acks accepted ${result.staleAcksAccepted.length} ` +
      `(refused ${result.refusedAcks}), completions never heard of ${result.completedUnheard.length}, resumed ${resumeAfterRestartS.toFixed(2)} s after the Redis restart and ` +
      `${resumeAfterClientKillS.toFixed(2)} s after the client kill, ${faults.workerKills} worker kills: ${failures.length ? 'FAIL' : 'PASS'}`;
    o.log(summary);
    for (const f of failures) o.log(`chaos FAILED: ${f}`);
    return {
      ...result,
      faults,
      duplicateBound,
      resumeAfterRestartS,
      resumeAfterClientKillS,
      refusedAfterStop,
      resumeAfterStopS,
      failures,
      pass: failures.length === 0,
      summary,
    };
  } finally {
    // Clean-up must finish even if a close waits on a socket nothing else keeps alive.
    const keepAlive = setInterval(() => undefined, 1000);
    for (const t of timers) clearInterval(t);
    for (const p of procs) p.child.kill('SIGKILL');
    for (const p of producers) if (p.exitCode === null) p.kill('SIGKILL');
    await settledWithin(observer?.close(), 5000);
    admin?.disconnect();
    await settledWithin(proxy?.close(), 5000);
    await settledWithin(redis?.stop(), 5000);
    built?.remove();
    rmSync(dir, { recursive: true, force: true });
    clearInterval(keepAlive);
  }
}
