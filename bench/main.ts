/**
 * relq vs BullMQ vs bee-queue (and the raw-ioredis / redis-benchmark floor), in one run
 * on one private redis-server. See bench/RESULTS.md for what is measured and how.
 *
 *   npm run bench                 full run (N 20,000, 3 reps, backlogs 1k/100k/1M)
 *   npm run bench -- --quick      < 1 min smoke run (N 2,000, 1 rep, no 1M backlog)
 *   npm run bench -- --n 50000 --reps 5 --libs relq,bullmq --skip backlog,idle
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ADAPTERS, type Adapter, type Conn, type Consumer, type LibName, type Producer } from './adapters.js';
import { makePayload, payloadBytes, type Payload } from './payload.js';
import { ForeignLoad } from './load.js';
import { startRedis, type PrivateRedis } from './redis-server.js';
import { writeReport, type BenchResults, type RunMeta } from './report.js';
import { closeWindow, openWindow, percentile, usedMemory, type WindowStats } from './stats.js';
import { Queue as RelqQueue, Worker as RelqWorker } from '../lib/index.js';
import { RELQ_BATCH_MODE, RELQ_QUEUE_OPTIONS, QUEUE_NAME } from './adapters.js';

// ---- configuration -----------------------------------------------------------------

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    n: { type: 'string' },
    reps: { type: 'string' },
    'batch-size': { type: 'string' },
    'batch-concurrency': { type: 'string' },
    libs: { type: 'string' },
    skip: { type: 'string' },
    backlogs: { type: 'string' },
    out: { type: 'string' },
    svg: { type: 'string' },
    json: { type: 'string' },
    command: { type: 'string' },
    help: { type: 'boolean', default: false },
    'quiet-budget': { type: 'string' },
  },
  allowPositionals: false,
});

if (argv.help) {
  console.log(`npm run bench [-- options]
  --quick            N 2,000, 1 rep, 1 s latency/idle windows, backlogs 1k/10k; writes to .bench-tmp/
  --n N              jobs per figure (default 20,000)
  --reps R           repetitions (default 3)
  --batch-size B     relq lease({count}) size for the batch-mode row (default 100)
  --batch-concurrency C  batches at once in the batch-mode row (default 2)
  --libs a,b         subset of relq,bullmq,bee-queue,ioredis
  --skip a,b         skip phases: floor,add,process,latency,memory,idle,monitor,backlog
  --backlogs a,b     relq backlog sizes (default 1000,100000,1000000)
  --out/--svg/--json output paths (default bench/RESULTS.md, bench/throughput.svg, bench/results.json)
  --quiet-budget S   seconds in all to wait for a quiet machine before measurements (default 150; quick 0)
  --ref GITREF       (run-bench only) benchmark lib/ as committed at GITREF
  --profile          (run-bench only) profile relq processing at concurrency 10 instead`);
  process.exit(0);
}
const quick = argv.quick!;
// compiled to <root>/.bench-tmp/bench/main.js
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cfg = {
  quick,
  n: Number(argv.n ?? (quick ? 2000 : 20_000)),
  reps: Number(argv.reps ?? (quick ? 1 : 3)),
  batchSize: Number(argv['batch-size'] ?? 100),
  batchConcurrency: Number(argv['batch-concurrency'] ?? 2),
  addBatch: 1000,
  concurrencies: [1, 10, 50],
  latencyRate: 500,
  latencySec: quick ? 1 : 10,
  latencyConcurrency: 10,
  idleSettleSec: quick ? 0.3 : 2,
  idleSec: quick ? 1 : 10,
  memJobs: 10_000,
  monitorJobs: quick ? 300 : 2000,
  backlogs: argv.backlogs
    ? argv.backlogs.split(',').map(Number)
    : quick
      ? [1000, 10_000]
      : [1000, 100_000, 1_000_000],
  benchmarkRequests: quick ? 10_000 : 100_000,
  /** before each measurement, wait up to 8 s for other processes to use < 0.3 cores; 150 s in all */
  quietBudgetMs: Number(argv['quiet-budget'] ?? (quick ? 0 : 150)) * 1000,
  libs: (argv.libs?.split(',') ?? ['relq', 'bullmq', 'bee-queue', 'ioredis']) as LibName[],
  skip: new Set(argv.skip?.split(',') ?? []),
  out: resolve(argv.out ?? (quick ? `${root}/.bench-tmp/RESULTS.quick.md` : `${root}/bench/RESULTS.md`)),
  svg: resolve(argv.svg ?? (quick ? `${root}/.bench-tmp/throughput.quick.svg` : `${root}/bench/throughput.svg`)),
  json: resolve(argv.json ?? (quick ? `${root}/.bench-tmp/results.quick.json` : `${root}/bench/results.json`)),
  command: argv.command ?? process.env.RELQ_BENCH_CMD ?? `npm run bench -- ${process.argv.slice(2).join(' ')}`.replace(/ -- $/, ''),
};
for (const l of cfg.libs) if (!ADAPTERS[l]) throw new Error(`unknown lib ${l}`);
const QUEUE_LIBS = cfg.libs.filter((l) => l !== 'ioredis');

// ---- results -----------------------------------------------------------------------

const results: BenchResults = { samples: {}, breakdown: {}, floor: {}, notes: [] };

function record(lib: string, metric: string, value: number): void {
  ((results.samples[lib] ??= {})[metric] ??= []).push(value);
}

let load: ForeignLoad | undefined;
let quietWaitedMs = 0;
/** Waits for a quieter machine before a measurement, within the run's budget. */
async function quiet(): Promise<void> {
  if (!load || quietWaitedMs >= cfg.quietBudgetMs) return;
  quietWaitedMs += await load.waitQuiet(0.3, Math.min(8000, cfg.quietBudgetMs - quietWaitedMs));
}
/** Marks the start of a measurement; call the result at its end to record the foreign load. */
function loadMark(lib: string, phase: string): () => void {
  const from = load?.series.length ?? 0;
  return () => {
    const x = load?.mean(from) ?? NaN;
    if (Number.isFinite(x)) record(lib, `${phase}.foreign`, x);
  };
}

function recordWindow(lib: string, phase: string, jobs: number, w: WindowStats, nodeCpuUs: number): void {
  record(lib, `${phase}.cmds`, w.total / jobs);
  record(lib, `${phase}.redisCpuUs`, (w.redisCpuSec * 1e6) / jobs);
  record(lib, `${phase}.nodeCpuUs`, nodeCpuUs / jobs);
  const perJob: Record<string, number> = {};
  for (const [k, v] of Object.entries(w.calls)) perJob[k] = v / jobs;
  (results.breakdown[lib] ??= {})[phase] = perJob;
}

const t0Run = Date.now();
function log(msg: string): void {
  const s = ((Date.now() - t0Run) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${s}s] ${msg}\n`);
}

// ---- helpers -----------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function rotate<T>(xs: T[], k: number): T[] {
  const i = k % xs.length;
  return [...xs.slice(i), ...xs.slice(0, i)];
}

/** Counts completions; resolves at `target`; first/last completion times. */
class Completions {
  count = 0;
  first = 0;
  last = 0;
  private resolveDone: (() => void) | undefined;
  readonly done: Promise<void>;
  constructor(readonly target: number) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }
  onDone = (): void => {
    const t = performance.now();
    if (this.count === 0) this.first = t;
    this.count += 1;
    this.last = t;
    if (this.count === this.target) this.resolveDone!();
  };
  async wait(what: string, timeoutMs = Math.max(120_000, this.target * 2)): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const to = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${what}: only ${this.count}/${this.target} jobs done after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.done, to]);
    } finally {
      clearTimeout(timer);
    }
  }
  /** Jobs/s between the first and the last completion (startup excluded). */
  rate(): number {
    return ((this.count - 1) * 1000) / (this.last - this.first);
  }
}

function payloads(n: number, from = 0): Payload[] {
  return Array.from({ length: n }, (_, i) => makePayload(from + i));
}

async function fill(p: Producer, n: number, parallel = 1): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: parallel }, async () => {
    while (next < n) {
      const from = next;
      const k = Math.min(cfg.addBatch, n - from);
      next += k;
      await p.addBatch(payloads(k, from));
    }
  });
  await Promise.all(lanes);
}

// ---- the run -----------------------------------------------------------------------

let redis: PrivateRedis | undefined;
let admin: Redis | undefined;

async function main(): Promise<void> {
  redis = await startRedis();
  const redisPid = redis.pid;
  load = new ForeignLoad(() => [redisPid]);
  load.start();
  const conn: Conn = { host: redis.host, port: redis.port };
  admin = new Redis(conn);
  await admin.ping();
  const adm = admin;
  log(`private redis-server ${redis.version} on port ${redis.port}; N=${cfg.n}, reps=${cfg.reps}, libs=${cfg.libs.join(',')}`);

  const flush = async () => {
    await adm.flushall('SYNC');
    gc();
  };
  const lib = (name: LibName): Adapter => ADAPTERS[name];
  const skip = (what: string) => cfg.skip.has(what);

  // -- floor: redis-benchmark on this server
  if (!skip('floor')) {
    const sha = (await adm.script('LOAD', 'return 1')) as string;
    for (const c of [1, 10, 50]) {
      results.floor[`PING c=${c}`] = redisBenchmark(['-t', 'ping'], c, 'PING_MBULK');
      results.floor[`EVALSHA c=${c}`] = redisBenchmark(['evalsha', sha, '0'], c, 'evalsha');
    }
    log(`redis-benchmark: ${Object.entries(results.floor).map(([k, v]) => `${k} ${Math.round(v)}/s`).join(', ')}`);
  }

  for (let rep = 0; rep < cfg.reps; rep++) {
    const order = rotate(cfg.libs, rep);
    const queueOrder = rotate(QUEUE_LIBS, rep);
    log(`== rep ${rep + 1}/${cfg.reps} (order ${order.join(', ')})`);

    // -- add, awaited one by one
    if (!skip('add')) {
      const data = payloads(cfg.n);
      for (const name of order) {
        await flush();
        const p = await lib(name).producer(conn);
        await p.add(makePayload(-1)); // loads scripts, warms the connection
        gc();
        await quiet();
        const w0 = await openWindow(adm);
        const lm = loadMark(name, 'addOne');
        const c0 = cpuUs();
        const t0 = performance.now();
        for (let i = 0; i < cfg.n; i++) await p.add(data[i]!);
        const ms = performance.now() - t0;
        lm();
        const cpu = cpuUs() - c0;
        const w = await closeWindow(adm, w0);
        await p.close();
        record(name, 'addOne.rate', (cfg.n * 1000) / ms);
        recordWindow(name, 'addOne', cfg.n, w, cpu);
        log(`addOne   ${name.padEnd(9)} ${Math.round((cfg.n * 1000) / ms)} jobs/s, ${(w.total / cfg.n).toFixed(2)} cmds/job`);
      }
    }

    // -- add in batches of 1,000
    if (!skip('add')) {
      const data = payloads(cfg.n);
      for (const name of order) {
        await flush();
        const p = await lib(name).producer(conn);
        await p.addBatch([makePayload(-1)]);
        gc();
        await quiet();
        const w0 = await openWindow(adm);
        const lm = loadMark(name, 'addBatch');
        const c0 = cpuUs();
        const t0 = performance.now();
        for (let i = 0; i < cfg.n; i += cfg.addBatch) await p.addBatch(data.slice(i, i + cfg.addBatch));
        const ms = performance.now() - t0;
        lm();
        const cpu = cpuUs() - c0;
        const w = await closeWindow(adm, w0);
        await p.close();
        record(name, 'addBatch.rate', (cfg.n * 1000) / ms);
        recordWindow(name, 'addBatch', cfg.n, w, cpu);
        log(`addBatch ${name.padEnd(9)} ${Math.round((cfg.n * 1000) / ms)} jobs/s, ${(w.total / cfg.n).toFixed(2)} cmds/job`);
      }
    }

    // -- process a pre-filled queue
    if (!skip('process')) {
      for (const c of cfg.concurrencies) {
        for (const name of order) {
          await processOnce(conn, adm, flush, name, `proc${c}`, (hooks) => lib(name).consumer(conn, c, hooks));
        }
      }
      if (cfg.libs.includes('relq')) {
        await processOnce(conn, adm, flush, 'relq', 'procBatch', (hooks) => lib('relq').batchConsumer!(conn, cfg.batchSize, cfg.batchConcurrency, hooks));
      }
    }

    // -- latency at a steady rate
    if (!skip('latency')) {
      for (const name of order) await latencyOnce(conn, adm, flush, name);
    }

    // -- memory per 10,000 waiting jobs
    if (!skip('memory')) {
      for (const name of order) {
        await flush();
        const p = await lib(name).producer(conn);
        await p.add(makePayload(-1)); // scripts loaded, keys exist
        await sleep(50);
        const m0 = await usedMemory(adm);
        await fill(p, cfg.memJobs);
        await sleep(50);
        const m1 = await usedMemory(adm);
        await p.close();
        const mib = ((m1 - m0) / 1024 / 1024) * (10_000 / cfg.memJobs);
        record(name, 'mem.mib', mib);
        log(`memory   ${name.padEnd(9)} ${mib.toFixed(2)} MiB per 10,000 waiting jobs`);
      }
    }

    if (rep === 0) {
      // -- commands per second of an idle worker (once: it is a count, not a speed)
      if (!skip('idle')) {
        for (const name of queueOrder) {
          await flush();
          const consumer = await lib(name).consumer(conn, cfg.latencyConcurrency, { onDone: () => undefined });
          await sleep(cfg.idleSettleSec * 1000);
          const w0 = await openWindow(adm);
          await sleep(cfg.idleSec * 1000);
          const w = await closeWindow(adm, w0);
          await consumer.close();
          record(name, 'idle.cmdsPerSec', w.total / cfg.idleSec);
          (results.breakdown[name] ??= {}).idle = Object.fromEntries(Object.entries(w.calls).map(([k, v]) => [k, v / cfg.idleSec]));
          log(`idle     ${name.padEnd(9)} ${(w.total / cfg.idleSec).toFixed(2)} cmds/s (${JSON.stringify(w.calls)})`);
        }
      }
      // -- round trips per job, counted with MONITOR on a short run
      if (!skip('monitor')) {
        for (const name of queueOrder) await roundTrips(conn, adm, flush, name);
      }
    }
  }

  // -- relq at growing backlogs
  if (!skip('backlog') && cfg.libs.includes('relq')) {
    for (const b of cfg.backlogs) {
      if (b >= 1_000_000 && freemem() < 4 * 1024 ** 3) {
        results.notes.push(`Backlog ${b} skipped: only ${(freemem() / 1024 ** 3).toFixed(1)} GiB free.`);
        continue;
      }
      await backlogRun(conn, adm, flush, b);
    }
  }

  await adm.flushall('SYNC');
}

function redisBenchmark(args: string[], c: number, test: string): number {
  const out = execFileSync(
    'redis-benchmark',
    ['-h', redis!.host, '-p', String(redis!.port), '-n', String(cfg.benchmarkRequests), '-c', String(c), '--csv', ...args],
    { encoding: 'utf8' },
  );
  for (const line of out.split('\n')) {
    const cols = line.split('","').map((s) => s.replace(/"/g, ''));
    if (cols[0]?.toLowerCase().startsWith(test.toLowerCase())) return Number(cols[1]);
  }
  throw new Error(`redis-benchmark: no ${test} line in:\n${out}`);
}

type Flush = () => Promise<void>;

async function processOnce(
  conn: Conn,
  adm: Redis,
  flush: Flush,
  name: LibName,
  phase: string,
  start: (hooks: { onDone(): void }) => Promise<Consumer>,
): Promise<void> {
  await flush();
  const p = await ADAPTERS[name].producer(conn);
  await fill(p, cfg.n);
  await p.close();
  gc();
  const done = new Completions(cfg.n);
  await quiet();
  const w0 = await openWindow(adm);
  const lm = loadMark(name, phase);
  const c0 = cpuUs();
  const consumer = await start({ onDone: done.onDone });
  await done.wait(`${phase} ${name}`);
  const cpu = cpuUs() - c0;
  lm();
  const w = await closeWindow(adm, w0);
  await consumer.close();
  const rate = done.rate();
  record(name, `${phase}.rate`, rate);
  recordWindow(name, phase, cfg.n, w, cpu);
  log(`${phase.padEnd(8)} ${name.padEnd(9)} ${Math.round(rate)} jobs/s, ${(w.total / cfg.n).toFixed(2)} cmds/job, node ${(cpu / cfg.n).toFixed(1)} µs/job`);
}

async function latencyOnce(conn: Conn, adm: Redis, flush: Flush, name: LibName): Promise<void> {
  await flush();
  const total = Math.round(cfg.latencyRate * cfg.latencySec);
  const warmup = Math.max(50, Math.round(total / 10));
  const lat: number[] = [];
  const done = new Completions(total);
  const consumer = await ADAPTERS[name].consumer(conn, cfg.latencyConcurrency, {
    onDone: done.onDone,
    onStart: (d) => {
      if (d.seq >= warmup) lat.push(performance.now() - d.ts);
    },
  });
  const p = await ADAPTERS[name].producer(conn);
  await sleep(300);
  gc();
  await quiet();
  const w0 = await openWindow(adm);
  const lm = loadMark(name, 'lat');
  const c0 = cpuUs();
  const interval = 1000 / cfg.latencyRate;
  const pending: Array<Promise<unknown>> = [];
  const t0 = performance.now();
  let i = 0;
  while (i < total) {
    const now = performance.now();
    while (i < total && t0 + i * interval <= now) {
      pending.push(p.add(makePayload(i, performance.now())));
      i++;
    }
    if (i < total) await sleep(Math.max(0, t0 + i * interval - performance.now()));
  }
  const sentMs = performance.now() - t0;
  await Promise.all(pending);
  await done.wait(`latency ${name}`);
  const wallMs = performance.now() - t0;
  const cpu = cpuUs() - c0;
  lm();
  const w = await closeWindow(adm, w0);
  await consumer.close();
  await p.close();
  lat.sort((a, b) => a - b);
  record(name, 'lat.p50', percentile(lat, 50));
  record(name, 'lat.p95', percentile(lat, 95));
  record(name, 'lat.p99', percentile(lat, 99));
  record(name, 'lat.rate', (total * 1000) / sentMs);
  record(name, 'lat.nodeCpuPct', (cpu / 1000 / wallMs) * 100);
  record(name, 'lat.redisCpuPct', ((w.redisCpuSec * 1000) / wallMs) * 100);
  record(name, 'lat.cmds', w.total / total);
  log(
    `latency  ${name.padEnd(9)} p50 ${percentile(lat, 50).toFixed(3)} p95 ${percentile(lat, 95).toFixed(3)} p99 ${percentile(lat, 99).toFixed(3)} ms at ${Math.round((total * 1000) / sentMs)}/s`,
  );
}

/**
 * Client commands per job, from MONITOR: each command a client sent is one line; a
 * MULTI..EXEC block from one client counts once (one round trip); lines from scripts
 * ('lua') are counted separately. Pipelined non-transaction commands count one each.
 */
async function roundTrips(conn: Conn, adm: Redis, flush: Flush, name: LibName): Promise<void> {
  const m = cfg.monitorJobs;
  await flush();
  const adminAddr = /addr=(\S+)/.exec((await adm.client('INFO')) as string)?.[1];
  const mon = await adm.monitor();
  let client = 0;
  let lua = 0;
  let inner = 0;
  const inMulti = new Set<string>();
  let sentinelSeen: (() => void) | undefined;
  const sentinel = `bench-sentinel-${Math.random()}`;
  mon.on('monitor', (_time: string, args: string[], source: string) => {
    const cmd = String(args[0]).toLowerCase();
    if (source === adminAddr) {
      if (cmd === 'echo' && args[1] === sentinel) sentinelSeen?.();
      return;
    }
    if (source === 'lua') {
      lua++;
      return;
    }
    if (cmd === 'multi') {
      inMulti.add(source);
      client++;
    } else if (cmd === 'exec' || cmd === 'discard') {
      inMulti.delete(source);
      inner++;
    } else if (!inMulti.has(source)) {
      client++;
    } else {
      inner++;
    }
  });
  const drain = async () => {
    const seen = new Promise<void>((r) => (sentinelSeen = r));
    await adm.echo(sentinel);
    await seen;
    const out = { client, lua, all: client + lua + inner };
    client = 0;
    lua = 0;
    inner = 0;
    return out;
  };
  // add, one by one
  const p = await ADAPTERS[name].producer(conn);
  await p.add(makePayload(-1));
  await drain();
  for (let i = 0; i < m; i++) await p.add(makePayload(i));
  const add = await drain();
  await p.close();
  // process at concurrency 10: the m jobs plus the warm-up one
  await drain();
  const done = new Completions(m + 1);
  const consumer = await ADAPTERS[name].consumer(conn, 10, { onDone: done.onDone });
  await done.wait(`monitor ${name}`);
  const proc = await drain();
  await consumer.close();
  mon.disconnect();
  const pm = m + 1;
  record(name, 'rt.add', add.client / m);
  record(name, 'rt.proc', proc.client / pm);
  record(name, 'mon.addTotal', add.all / m);
  record(name, 'mon.procTotal', proc.all / pm);
  log(
    `monitor  ${name.padEnd(9)} client cmds/add ${(add.client / m).toFixed(2)} (${(add.all / m).toFixed(2)} in all), per processed job ${(proc.client / pm).toFixed(2)} (${(proc.all / pm).toFixed(2)} in all; includes worker start-up)`,
  );
}

/**
 * relq processing throughput (concurrency 10) with a backlog of `b` jobs. One worker;
 * the queue is paused while it is filled; time runs from resume() to the last counted
 * completion. Backlogs >= N: N jobs are processed from the top of the backlog (which
 * never drops below b - N) and topped up between reps. Smaller backlogs: cycles of
 * fill b / drain b until N jobs are processed, only the draining timed.
 */
async function backlogRun(conn: Conn, adm: Redis, flush: Flush, b: number): Promise<void> {
  await flush();
  const producer = new RelqQueue<Payload, unknown>(QUEUE_NAME, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const wq = new RelqQueue<Payload, unknown>(QUEUE_NAME, { connection: conn, ...RELQ_QUEUE_OPTIONS });
  const p: Producer = {
    add: (d) => producer.add(d),
    addBatch: (ds) => producer.addBulk(ds.map((data) => ({ data }))),
    close: () => producer.close(),
  };
  await producer.pause();
  const tf = performance.now();
  const m0 = await usedMemory(adm);
  await fill(p, b, 4);
  const m1 = await usedMemory(adm);
  const fillSec = (performance.now() - tf) / 1000;
  let counter: Completions | undefined;
  const worker = new RelqWorker<Payload, unknown>(wq, async () => undefined, { concurrency: 10 });
  const sub = worker.events.subscribe((e) => {
    if (e.type === 'completed') counter?.onDone();
  });
  await sleep(200);
  const settle = async () => {
    await producer.pause();
    for (let k = 0; k < 200 && worker.inFlight > 0; k++) await sleep(10);
    await sleep(20);
  };
  for (let rep = 0; rep < cfg.reps; rep++) {
    const lm = loadMark('relq', `backlog.${b}`);
    let processed = 0;
    let ms = 0;
    const perCycle = Math.min(b, cfg.n);
    while (processed < cfg.n) {
      const pending = (await producer.counts()).pending;
      if (pending < b) await fill(p, b - pending, 4);
      gc();
      if (processed === 0) await quiet();
      counter = new Completions(perCycle);
      const t0 = performance.now();
      await producer.resume();
      await counter.wait(`backlog ${b}`);
      ms += counter.last - t0;
      processed += perCycle;
      counter = undefined;
      await settle();
    }
    const rate = (processed * 1000) / ms;
    record('relq', `backlog.${b}`, rate);
    lm();
    log(`backlog  relq      ${b} waiting: ${Math.round(rate)} jobs/s (fill ${Math.round(b / fillSec)} jobs/s, ${((m1 - m0) / 1024 / 1024).toFixed(0)} MiB)`);
  }
  record('relq', `backlogMem.${b}`, ((m1 - m0) / 1024 / 1024 / b) * 10_000);
  await worker.close();
  sub.unsubscribe();
  await wq.close();
  await producer.close();
}

// ---- entry -------------------------------------------------------------------------

async function run(): Promise<void> {
  const started = new Date();
  let ok = false;
  try {
    await main();
    ok = true;
  } finally {
    load?.stop();
    if (load) results.foreign = load.series;
    if (quietWaitedMs > 0) results.notes.push(`The bench waited ${(quietWaitedMs / 1000).toFixed(0)} s in all (budget ${cfg.quietBudgetMs / 1000} s) for other processes to go below 0.3 cores before measurements.`);
    await admin?.quit().catch(() => undefined);
    const version = redis?.version ?? 'unknown';
    await redis?.stop();
    if (ok) {
      const meta: RunMeta = {
        date: started.toISOString(),
        durationSec: (Date.now() - started.getTime()) / 1000,
        command: cfg.command,
        nproc: cpus().length,
        cpuModel: cpus()[0]?.model ?? 'unknown',
        memGiB: totalmem() / 1024 ** 3,
        node: process.version,
        redis: version,
        libs: libVersions(),
        cfg: { ...cfg, skip: [...cfg.skip], payloadBytes: payloadBytes(), batchMode: RELQ_BATCH_MODE },
      };
      for (const f of [cfg.out, cfg.svg, cfg.json]) mkdirSync(dirname(f), { recursive: true });
      writeFileSync(cfg.json, `${JSON.stringify({ meta, results }, null, 1)}\n`);
      writeReport(meta, results, cfg.out, cfg.svg);
      log(`wrote ${cfg.out}, ${cfg.svg}, ${cfg.json} in ${meta.durationSec.toFixed(0)} s`);
    }
  }
}

function libVersions(): Record<string, string> {
  const v = (dir: string) => {
    try {
      return (JSON.parse(readFileSync(`${root}/${dir}/package.json`, 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  let commit = process.env.RELQ_BENCH_LIB ?? '';
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
      if (execFileSync('git', ['status', '--porcelain', 'lib'], { cwd: root, encoding: 'utf8' }).trim()) commit += ' + uncommitted lib/ changes';
    } catch {
      commit = 'no git';
    }
  }
  return {
    relq: `${v('.')} (${commit})`,
    bullmq: v('node_modules/bullmq'),
    'bee-queue': v('node_modules/bee-queue'),
    ioredis: v('node_modules/ioredis'),
  };
}

run().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
