/**
 * Latency at a steady rate: `cfg.latencyRate` adds per second for `cfg.latencySec` to a worker
 * at concurrency `cfg.latencyConcurrency`; from add to handler start, after a warm-up tenth.
 */
import { performance } from 'node:perf_hooks';
import { ADAPTERS, type LibName } from '../adapters.js';
import { makePayload } from '../payload.js';
import { log } from '../recorder.js';
import { closeWindow, openWindow, percentile } from '../stats.js';
import { Completions, cpuUs, gc, sleep, type Scenario, type ScenarioContext } from './kit.js';

export const latency: Scenario = {
  name: 'latency',
  when: 'every rep',
  libs: 'all',
  async run(ctx, libs) {
    for (const name of libs) await latencyOnce(ctx, name);
  },
};

async function latencyOnce({ cfg, conn, admin, rec, flush }: ScenarioContext, name: LibName): Promise<void> {
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
  await rec.quiet();
  const w0 = await openWindow(admin);
  const lm = rec.loadMark(name, 'lat');
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
  const w = await closeWindow(admin, w0);
  await consumer.close();
  await p.close();
  lat.sort((a, b) => a - b);
  rec.record(name, 'lat.p50', percentile(lat, 50));
  rec.record(name, 'lat.p95', percentile(lat, 95));
  rec.record(name, 'lat.p99', percentile(lat, 99));
  rec.record(name, 'lat.rate', (total * 1000) / sentMs);
  rec.record(name, 'lat.nodeCpuPct', (cpu / 1000 / wallMs) * 100);
  rec.record(name, 'lat.redisCpuPct', ((w.redisCpuSec * 1000) / wallMs) * 100);
  rec.record(name, 'lat.cmds', w.total / total);
  rec.recordBreakdown(name, 'lat', total, w);
  log(
    `latency  ${name.padEnd(9)} p50 ${percentile(lat, 50).toFixed(3)} p95 ${percentile(lat, 95).toFixed(3)} p99 ${percentile(lat, 99).toFixed(3)} ms at ${Math.round((total * 1000) / sentMs)}/s`,
  );
}
