/**
 * What a sandbox costs: `npm run bench -- --sandbox [--n 5000] [--concurrency 10] [--reps 3]`.
 * Jobs per second of a trivial handler (it returns its job's data) run by one Worker on a
 * private Redis: in-process, in worker threads and in child processes. Each rep fills a fresh
 * queue, then times the worker from its start to the last completion (children's start
 * included). Prints the medians; writes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Queue, Worker, type Handler, type HandlerFile, type SandboxOptions } from '../lib/index.js';
import { startRedis } from './redis-server.js';

const { values: a } = parseArgs({
  options: {
    n: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '10' },
    reps: { type: 'string', default: '3' },
  },
});
const n = Number(a.n);
const concurrency = Number(a.concurrency);
const reps = Number(a.reps);

const dir = mkdtempSync(join(tmpdir(), 'relq-bench-sandbox-'));
const file = join(dir, 'handler.mjs');
writeFileSync(file, 'export default async (job) => job.data;\n');

interface Mode {
  name: string;
  handler: Handler<number, number> | HandlerFile;
  sandbox?: SandboxOptions;
}
const modes: Mode[] = [
  { name: 'in-process', handler: async (job) => job.data },
  { name: 'threads', handler: file, sandbox: { kind: 'thread' } },
  { name: 'processes', handler: file, sandbox: { kind: 'process' } },
];

const redis = await startRedis();
try {
  console.log(`sandbox cost: ${n} jobs, concurrency ${concurrency}, ${reps} reps, Redis ${redis.version}`);
  for (const mode of modes) {
    const rates: number[] = [];
    for (let rep = 0; rep < reps; rep++) rates.push(await measure(mode, `${mode.name}-${rep}`));
    rates.sort((x, y) => x - y);
    console.log(`${mode.name.padEnd(12)} ${Math.round(rates[Math.floor(rates.length / 2)]!).toString().padStart(7)} jobs/s  (reps: ${rates.map(Math.round).join(', ')})`);
  }
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function measure(mode: Mode, prefix: string): Promise<number> {
  const q = new Queue<number, number>('sandbox-cost', { connection: { port: redis.port }, prefix });
  for (let i = 0; i < n; i += 1000) await q.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ data: i + k })));
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const t0 = performance.now();
  const worker = new Worker<number, number>(q, mode.handler, { concurrency, ...(mode.sandbox && { sandbox: mode.sandbox }) });
  const sub = worker.events.subscribe((e) => {
    if (e.type === 'completed' && ++done === n) finished();
  });
  await all;
  const rate = n / ((performance.now() - t0) / 1000);
  sub.unsubscribe();
  await worker.close();
  await q.close();
  return rate;
}
