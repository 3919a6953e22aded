/**
 * The cost of rate limits (relq only): the same backlog processed by one Worker without a
 * limiter, with a queue limiter that never binds (the price of the check: commands and time per
 * job), and with one that binds (leases per window as configured, commands while waiting for
 * the window to end).
 */
import { Queue, Worker } from '../../lib/index.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { Completions, type Scenario } from './kit.js';

const JOBS = 3000;
const BINDING = { max: 500, durationMs: 500 };
const BINDING_JOBS = 1500;

export const rateLimited: Scenario = {
  name: 'rate-limited',
  when: 'after',
  libs: 'queues',
  async run({ conn, admin, rec, flush }, libs) {
    if (!libs.includes('relq')) return;
    const connection = { host: conn.host, port: conn.port };
    const runOne = async (label: string, limiter: { max: number; durationMs: number } | undefined, n: number) => {
      await flush();
      const q = new Queue<number>(`bench-limited-${label}`, { connection, ...(limiter ? { limiter } : {}) });
      try {
        for (let i = 0; i < n; i += 500) await q.addBulk(Array.from({ length: Math.min(500, n - i) }, (_, k) => ({ data: i + k })));
        const done = new Completions(n);
        const w0 = await openWindow(admin);
        const t0 = performance.now();
        const worker = new Worker<number>(q, async () => done.onDone(), { concurrency: 10 });
        await done.wait(`rate-limited ${label}`);
        const ms = performance.now() - t0;
        await worker.close();
        const w = await closeWindow(admin, w0);
        rec.record('relq', `limited.${label}.cmdsPerJob`, w.total / n);
        rec.record('relq', `limited.${label}.jobsPerSec`, (n * 1000) / ms);
        log(`rate-limited ${label}: ${n} jobs in ${ms.toFixed(0)} ms, ${(w.total / n).toFixed(2)} cmds/job (${JSON.stringify(w.calls)})`);
        return ms;
      } finally {
        await q.deleteQueue().catch(() => undefined);
        await q.close();
      }
    };
    await runOne('none', undefined, JOBS);
    await runOne('open', { max: 1_000_000_000, durationMs: 60_000 }, JOBS);
    const ms = await runOne('binding', BINDING, BINDING_JOBS);
    // 1500 jobs at 500 per 500 ms: the third window opens 1000 ms after the first lease
    rec.record('relq', 'limited.binding.windowsSeen', ms / BINDING.durationMs);
  },
};
