/** Redis memory per 10,000 waiting jobs: `used_memory` before and after adding `cfg.memJobs`. */
import { ADAPTERS } from '../adapters.js';
import { makePayload } from '../payload.js';
import { log } from '../recorder.js';
import { usedMemory } from '../stats.js';
import { fill, sleep, type Scenario } from './kit.js';

export const memory: Scenario = {
  name: 'memory',
  when: 'every rep',
  libs: 'all',
  async run({ cfg, conn, admin, rec, flush }, libs) {
    // the batch floor's list is the floor's
    for (const name of libs.filter((l) => !ADAPTERS[l].addsLike)) {
      await flush();
      const p = await ADAPTERS[name].producer(conn);
      await p.add(makePayload(-1)); // scripts loaded, keys exist
      await sleep(50);
      const m0 = await usedMemory(admin);
      await fill(cfg, p, cfg.memJobs);
      await sleep(50);
      const m1 = await usedMemory(admin);
      await p.close();
      const mib = ((m1 - m0) / 1024 / 1024) * (10_000 / cfg.memJobs);
      rec.record(name, 'mem.mib', mib);
      log(`memory   ${name.padEnd(9)} ${mib.toFixed(2)} MiB per 10,000 waiting jobs`);
    }
  },
};
