/**
 * The cost of the limits the fleet shares (relq only; docs/concurrency.md): the same backlog
 * processed by one Worker of 10 slots without a queue-wide limit, with one that never binds
 * (the price of the check: commands and time per job), and with one of 5 that binds; then a
 * grouped backlog (20 groups, groupConcurrency 2) without and with group overrides.
 */
import { Queue, type QueueOptions } from '../../lib/index.js';
import { log } from '../recorder.js';
import { drainOnce, type Scenario } from './kit.js';

/** Jobs per measurement (a fifth in --quick, which only shows that it runs). */
const JOBS = 3000;
const GROUPS = 20;

export const fleetLimits: Scenario = {
  name: 'fleet-limits',
  when: 'after',
  libs: 'queues',
  async run({ cfg, conn, admin, rec, flush }, libs) {
    if (!libs.includes('relq')) return;
    const jobs = cfg.quick ? JOBS / 5 : JOBS;
    const connection = { host: conn.host, port: conn.port };
    const runOne = async (label: string, opts: QueueOptions, grouped: boolean, overrides = false) => {
      await flush();
      const q = new Queue<number>(`bench-fleet-${label}`, { connection, ...opts });
      try {
        if (overrides) for (let g = 0; g < GROUPS; g += 2) await q.setGroupOverride(`g${g}`, { concurrency: 3 });
        for (let i = 0; i < jobs; i += 500) {
          await q.addBulk(Array.from({ length: Math.min(500, jobs - i) }, (_, k) => ({ data: i + k, ...(grouped ? { opts: { group: `g${(i + k) % GROUPS}` } } : {}) })));
        }
        const { ms, cmdsPerJob, calls } = await drainOnce(admin, q, jobs, `fleet-limits ${label}`);
        rec.record('relq', `fleet.${label}.cmdsPerJob`, cmdsPerJob);
        rec.record('relq', `fleet.${label}.jobsPerSec`, (jobs * 1000) / ms);
        log(`fleet-limits ${label}: ${jobs} jobs in ${ms.toFixed(0)} ms, ${cmdsPerJob.toFixed(2)} cmds/job (${JSON.stringify(calls)})`);
      } finally {
        await q.deleteQueue().catch(() => undefined);
        await q.close();
      }
    };
    await runOne('none', {}, false);
    await runOne('global-open', { globalConcurrency: 1_000_000 }, false);
    await runOne('global-binding', { globalConcurrency: 5 }, false);
    await runOne('groups', { groupConcurrency: 2 }, true);
    await runOne('groups-overridden', { groupConcurrency: 2 }, true, true);
  },
};
