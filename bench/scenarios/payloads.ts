/**
 * Larger payloads: for each of `cfg.payloadSizes` (10 and 100 KiB of JSON), adds one by one,
 * adds in batches of `cfg.payloadAddBatch` and processing at concurrency 10, every library
 * (the floors where they differ: the batch floor adds as the floor does). Figures
 * 'pay<kib>k.addOne', 'pay<kib>k.addBatch', 'pay<kib>k.proc10': jobs/s and per job commands,
 * Redis CPU and Node CPU. Fewer jobs for the larger size, so that Redis memory stays moderate;
 * the server is emptied before each measurement.
 */
import { ADAPTERS } from '../adapters.js';
import { makeSizedPayload } from '../payload.js';
import { measureAdds } from './add.js';
import { payloads, type MakePayload, type Scenario } from './kit.js';
import { processOnce } from './process.js';

const CONCURRENCY = 10;

export const payloadSizes: Scenario = {
  name: 'payloads',
  when: 'every rep',
  libs: 'all',
  async run(ctx, all) {
    const { cfg, conn } = ctx;
    // the working tree's relq only: a --ref run compares its builds elsewhere
    const libs = all.filter((l) => l !== 'relq@ref');
    const adders = libs.filter((l) => !ADAPTERS[l].addsLike);
    for (const { kib, jobs } of cfg.payloadSizes) {
      const make: MakePayload = (seq) => makeSizedPayload(seq, kib * 1024);
      const phase = (what: string) => `pay${kib}k.${what}`;
      const one = payloads(jobs, 0, make);
      for (const name of adders) {
        await measureAdds(ctx, name, phase('addOne'), jobs, (p) => p.add(make(-1)), async (p) => {
          for (const job of one) await p.add(job);
        });
      }
      for (const name of adders) {
        await measureAdds(ctx, name, phase('addBatch'), jobs, (p) => p.addBatch([make(-1)]), async (p) => {
          for (let i = 0; i < jobs; i += cfg.payloadAddBatch) await p.addBatch(one.slice(i, i + cfg.payloadAddBatch));
        });
      }
      for (const name of libs) {
        await processOnce(ctx, name, phase(`proc${CONCURRENCY}`), (hooks) => ADAPTERS[name].consumer(conn, CONCURRENCY, hooks), true, { jobs, make, batch: cfg.payloadAddBatch });
      }
    }
  },
};
