/** Commands per second of an idle worker (once per run: it is a count, not a speed). */
import { ADAPTERS } from '../adapters.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow } from '../stats.js';
import { sleep, type Scenario } from './kit.js';

export const idle: Scenario = {
  name: 'idle',
  when: 'first rep',
  libs: 'queues',
  async run({ cfg, conn, admin, rec, flush }, libs) {
    for (const name of libs) {
      await flush();
      const consumer = await ADAPTERS[name].consumer(conn, cfg.latencyConcurrency, { onDone: () => undefined });
      await sleep(cfg.idleSettleSec * 1000);
      const w0 = await openWindow(admin);
      await sleep(cfg.idleSec * 1000);
      const w = await closeWindow(admin, w0);
      await consumer.close();
      rec.record(name, 'idle.cmdsPerSec', w.total / cfg.idleSec);
      (rec.results.breakdown[name] ??= {}).idle = Object.fromEntries(Object.entries(w.calls).map(([k, v]) => [k, v / cfg.idleSec]));
      log(`idle     ${name.padEnd(9)} ${(w.total / cfg.idleSec).toFixed(2)} cmds/s (${JSON.stringify(w.calls)})`);
    }
  },
};
