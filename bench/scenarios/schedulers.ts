/**
 * The cost of a scheduler tick (relq only): Redis commands and time of one runSchedulers()
 * with nothing due (what a SchedulerTicker costs between slots), and with S schedulers due
 * at once (what each slot costs: one read, one compare-and-set script for all of them).
 */
import { Queue } from '../../lib/index.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { sleep, type Scenario } from './kit.js';

const SCHEDULERS = 100;
const TICKS = 20;

export const schedulers: Scenario = {
  name: 'schedulers',
  when: 'after',
  libs: 'queues',
  async run({ conn, admin, rec, flush }, libs) {
    if (!libs.includes('relq')) return;
    await flush();
    const q = new Queue('bench-schedulers', { connection: { host: conn.host, port: conn.port } });
    try {
      // Slots on whole seconds: all S come due together.
      for (let i = 0; i < SCHEDULERS; i++) await q.upsertScheduler(`s${i}`, { everyMs: 1000 });
      let w0 = await openWindow(admin);
      let t0 = performance.now();
      for (let i = 0; i < TICKS; i++) await q.runSchedulers(); // usually nothing due
      const idleMs = (performance.now() - t0) / TICKS;
      const idle = await closeWindow(admin, w0);
      const { nextDueAt, now } = await q.runSchedulers();
      await sleep(Math.max(0, (nextDueAt ?? now) - now) + 20);
      w0 = await openWindow(admin);
      t0 = performance.now();
      const r = await q.runSchedulers();
      const dueMs = performance.now() - t0;
      const due = await closeWindow(admin, w0);
      rec.record('relq', 'scheduler.idleTick.cmds', idle.total / TICKS);
      rec.record('relq', 'scheduler.idleTick.ms', idleMs);
      rec.record('relq', 'scheduler.dueTick.cmds', due.total);
      rec.record('relq', 'scheduler.dueTick.ms', dueMs);
      rec.record('relq', 'scheduler.dueTick.redisCpuUsPerScheduler', (due.redisCpuSec * 1e6) / Math.max(1, r.advanced));
      log(
        `schedulers relq idle tick ${(idle.total / TICKS).toFixed(1)} cmds ${idleMs.toFixed(2)} ms; ` +
          `${r.advanced} due: ${due.total} cmds ${dueMs.toFixed(2)} ms (${JSON.stringify(due.calls)})`,
      );
    } finally {
      await q.deleteQueue().catch(() => undefined);
      await q.close();
    }
  },
};
