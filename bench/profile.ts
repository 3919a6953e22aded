/**
 * Profiles one relq figure in isolation: `npm run bench -- --profile [--mode process|add|batch]
 * [--concurrency 10] [--batch-size 100 --batch-concurrency 2] [--n 50000] [--tracing]`. run-bench starts this file under `node --cpu-prof`;
 * the queue is filled by a child process (not profiled), so the profile holds the
 * measured phase only (plus idle time). Afterwards run-bench summarises the profile
 * with bench/analyze-profile.mjs. Also prints Redis commands per job, by command. `--tracing`
 * registers relq/tracing as the observability scenario does (in the filling child too, so
 * that the jobs carry their publish context).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { BatchWorker, Queue, Worker } from '../lib/index.js';
import { QUEUE_NAME, RELQ_QUEUE_OPTIONS } from './adapters.js';
import { makePayload, type Payload } from './payload.js';
import { startRedis } from './redis-server.js';
import { closeWindow, openWindow } from './stats.js';

const { values: a } = parseArgs({
  options: {
    mode: { type: 'string', default: 'process' },
    concurrency: { type: 'string', default: '10' },
    n: { type: 'string', default: '50000' },
    'batch-size': { type: 'string', default: '100' },
    'batch-concurrency': { type: 'string', default: '2' },
    fill: { type: 'boolean', default: false },
    port: { type: 'string' },
    quick: { type: 'boolean', default: false },
    events: { type: 'string', default: 'on' },
    tracing: { type: 'boolean', default: false },
  },
});
const n = Number(a.n);
const queueOptions = { ...RELQ_QUEUE_OPTIONS, events: a.events !== 'off' };

/** relq/tracing with the observability scenario's SDK setup (bench/scenarios/observability.ts). */
async function startTracing(): Promise<void> {
  const { context, propagation } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { RelqTracing } = await import('../lib/tracing/index.js');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = { export: (_spans: unknown, done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => undefined };
  new RelqTracing({ tracerProvider: new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] }) });
}

async function fillOnly(port: number): Promise<void> {
  const q = new Queue<Payload, unknown>(QUEUE_NAME, { connection: { port }, ...queueOptions });
  for (let i = 0; i < n; i += 1000) {
    await q.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ data: makePayload(i + k) })));
  }
  await q.close();
}

async function main(): Promise<void> {
  if (a.tracing) await startTracing();
  if (a.fill) return fillOnly(Number(a.port));
  const redis = await startRedis();
  const conn = { host: redis.host, port: redis.port };
  const admin = new Redis(conn);
  try {
    const mode = a.mode!;
    const c = Number(a.concurrency);
    if (mode !== 'add') {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--fill', '--port', String(redis.port), '--n', String(n), ...(a.tracing ? ['--tracing'] : [])], {
        stdio: 'inherit',
      });
      await new Promise<void>((res, rej) => child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`fill exited ${code}`)))));
    }
    const q = new Queue<Payload, unknown>(QUEUE_NAME, { connection: conn, ...queueOptions });
    await q.client.ping();
    const w0 = await openWindow(admin);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // V8 profile timestamps are monotonic-clock µs, like hrtime: lets the analyzer cut the window.
    const h0 = process.hrtime.bigint() / 1000n;
    let label: string;
    let closeWorker: (() => Promise<void>) | undefined;
    if (mode === 'add') {
      label = 'add, awaited one by one';
      for (let i = 0; i < n; i++) await q.add(makePayload(i));
    } else if (mode === 'batch') {
      // What the bench's batch-mode row runs: one BatchWorker, --batch-concurrency batches at once.
      const batches = Number(a['batch-concurrency']);
      label = `BatchWorker, size ${a['batch-size']}, ${batches} at once`;
      let done = 0;
      let resolve!: () => void;
      const finished = new Promise<void>((r) => (resolve = r));
      const w = new BatchWorker<Payload, unknown>(q, async () => undefined, { size: Number(a['batch-size']), concurrency: batches });
      w.events.subscribe((e) => {
        if (e.type === 'completed' && ++done === n) resolve();
      });
      await finished;
      closeWorker = () => w.close();
    } else {
      label = `Worker, concurrency ${c}`;
      let done = 0;
      let resolve!: () => void;
      const finished = new Promise<void>((r) => (resolve = r));
      const w = new Worker<Payload, unknown>(q, async () => undefined, { concurrency: c });
      w.events.subscribe((e) => {
        if (e.type === 'completed' && ++done === n) resolve();
      });
      await finished;
      closeWorker = () => w.close();
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const h1 = process.hrtime.bigint() / 1000n;
    const windowFile = join(dirname(fileURLToPath(import.meta.url)), '..', 'profile', 'window.json');
    mkdirSync(dirname(windowFile), { recursive: true });
    writeFileSync(windowFile, JSON.stringify({ start: Number(h0), end: Number(h1), mode, n }));
    const win = await closeWindow(admin, w0);
    if (closeWorker) await closeWorker();
    await q.close();
    const per = (x: number) => (x / n).toFixed(3);
    console.log(`\nprofile: relq ${label}, events ${queueOptions.events ? 'on' : 'off'}${a.tracing ? ', tracing' : ''}, ${n} jobs: ${Math.round((n * 1000) / ms)} jobs/s`);
    console.log(`  Node CPU ${((cpu.user + cpu.system) / n).toFixed(1)} µs/job (user ${(cpu.user / n).toFixed(1)}, sys ${(cpu.system / n).toFixed(1)}), ${(((cpu.user + cpu.system) / 1000 / ms) * 100).toFixed(0)}% of one core`);
    console.log(`  Redis CPU ${((win.redisCpuSec * 1e6) / n).toFixed(1)} µs/job, ${((win.redisCpuSec * 1e5) / ms).toFixed(0)}% of one core`);
    const scripts = ['fcall', 'evalsha', 'eval'].filter((k) => win.calls[k]);
    console.log(
      `  Redis time inside commands: ${Object.entries(win.usec).sort((x, y) => y[1] - x[1]).slice(0, 6).map(([k, u]) => `${k} ${(u / n).toFixed(1)} µs/job (${(u / win.calls[k]!).toFixed(1)} µs/call)`).join(', ')}${scripts.length ? ' — script time includes its inner commands' : ''}`,
    );
    console.log(`  Redis commands ${per(win.total)}/job: ${Object.entries(win.calls).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${per(v)}`).join(', ')}`);
  } finally {
    await admin.quit();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
