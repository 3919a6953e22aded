/**
 * The cost of rate limits (relq only): the same backlog processed by one Worker without a
 * limiter, with a queue limiter that never binds (the price of the check: commands and time per
 * job), and with one that binds (leases per window as configured, commands while waiting for
 * the window to end).
 */
import { Queue } from '../../lib/index.js';
import { log } from '../recorder.js';
import { drainOnce, type Scenario } from './kit.js';

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
        const { ms, cmdsPerJob, calls } = await drainOnce(admin, q, n, `rate-limited ${label}`);
        rec.record('relq', `limited.${label}.cmdsPerJob`, cmdsPerJob);
        rec.record('relq', `limited.${label}.jobsPerSec`, (n * 1000) / ms);
        log(`rate-limited ${label}: ${n} jobs in ${ms.toFixed(0)} ms, ${cmdsPerJob.toFixed(2)} cmds/job (${JSON.stringify(calls)})`);
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
