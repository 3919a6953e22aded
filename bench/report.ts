/** Writes bench/RESULTS.md (generated part only) and the throughput chart (SVG, no deps). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ADAPTERS, isFloor, type LibName } from './adapters.js';
import { compareSection } from './compare.js';
import { latencyLoadSection } from './report-latency-load.js';
import { payloadSection } from './report-payloads.js';
import { groupedSizes } from './scenarios/grouped.js';
import { PROCESSES } from './scenarios/processes.js';
import type { BenchResults, RunMeta } from './results.js';
import { fmt, median, range } from './stats.js';

const BEGIN = '<!-- BEGIN GENERATED: npm run bench (text outside these markers is kept) -->';
const END = '<!-- END GENERATED -->';
const LIBS: LibName[] = ['relq', 'bullmq', 'bee-queue', 'ioredis', 'ioredis-batch'];
const LABEL: Record<string, string> = { relq: 'relq', bullmq: 'BullMQ', 'bee-queue': 'bee-queue', ioredis: 'ioredis floor', 'ioredis-batch': 'ioredis batch floor', groupmq: 'groupmq' };
/** Which floor a "relq / floor" ratio is against. */
const FLOOR_NAME: Record<string, string> = { ioredis: 'naive', 'ioredis-batch': 'batch' };

export function writeReport(meta: RunMeta, r: BenchResults, mdPath: string, svgPath: string): void {
  const get = (lib: string, metric: string): number[] => r.samples[lib]?.[metric] ?? [];
  const med = (lib: string, metric: string): number => median(get(lib, metric));
  const cell = (lib: string, metric: string, digits?: number): string => {
    const xs = get(lib, metric);
    if (xs.length === 0) return '–';
    const m = fmt(median(xs), digits);
    if (xs.length === 1) return m;
    const [lo, hi] = range(xs);
    return `${m} <sub>${fmt(lo, digits)}–${fmt(hi, digits)}</sub>`;
  };
  const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '–');
  const libs = LIBS.filter((l) => meta.cfg.libs.includes(l));
  const qlibs = libs.filter((l) => !isFloor(l));
  const floors = libs.filter(isFloor);
  /** relq against the faster floor (higher `rate`, default `metric` itself) at `metric`, named: "0.40× (batch)". */
  const floorRatio = (metric: string, rate = metric): string => {
    const best = floors.filter((l) => Number.isFinite(med(l, rate)) && Number.isFinite(med(l, metric))).sort((a, b) => med(b, rate) - med(a, rate))[0];
    return best ? `${ratio(med('relq', metric), med(best, metric))} (${FLOOR_NAME[best]})` : '–';
  };
  const L: string[] = [];
  const reps = meta.cfg.reps;
  const medNote = reps > 1 ? `median of ${reps} reps, <sub>min–max</sub>` : '1 rep';

  L.push(BEGIN, '');
  L.push(`Run: ${meta.date.slice(0, 16).replace('T', ' ')} UTC, \`${meta.command}\`, ${Math.round(meta.durationSec)} s.${meta.cfg.quick ? ' **Quick mode: small N, 1 rep — proves the bench runs; the numbers are noisy.**' : ''}`);
  L.push('');
  L.push(`Machine: ${meta.nproc} × ${meta.cpuModel}, ${meta.memGiB.toFixed(1)} GiB RAM. Node ${meta.node}, Redis ${meta.redis} (private \`redis-server\`, no persistence, same machine).`);
  L.push(`Libraries: relq ${meta.libs.relq}, BullMQ ${meta.libs.bullmq}, bee-queue ${meta.libs['bee-queue']}, ioredis ${meta.libs.ioredis}${meta.libs.groupmq ? `, groupmq ${meta.libs.groupmq}` : ''}.`);
  L.push(`N = ${fmt(meta.cfg.n, 0)} jobs per figure, payload ${meta.cfg.payloadBytes} bytes of JSON, ${medNote}; libraries alternate within each rep and the order rotates by rep.`);
  L.push('');
  L.push('Only same-run ratios mean much: absolute jobs/s move by up to 2× between runs on a shared machine.');
  L.push('');
  L.push(...compareSection(meta, r));

  // ---- targets
  const bullBest = Math.max(med('bullmq', 'proc10.rate'), med('bullmq', 'proc50.rate'));
  type T = { name: string; value: string; target: string; ok: boolean | undefined; by: string };
  const targets: T[] = [];
  const ratioTarget = (name: string, a: number, b: number, min: number, what = 'BullMQ') => {
    const x = a / b;
    const ok = Number.isFinite(x) ? x >= min : undefined;
    targets.push({
      name,
      value: Number.isFinite(x) ? `${x.toFixed(2)}× ${what} (${fmt(a, 0)} vs ${fmt(b, 0)} jobs/s)` : '–',
      target: `≥ ${min}×`,
      ok,
      by: ok === undefined ? '' : ok ? `+${(((x - min) / min) * 100).toFixed(0)}%` : `${(((x - min) / min) * 100).toFixed(0)}% (needs ${(min / x).toFixed(2)}× faster)`,
    });
  };
  const maxTarget = (name: string, x: number, max: number, unit: string, digits = 2) => {
    // judged as shown: e.g. 3.0002 commands per add (a producer's once-a-second check of the
    // listeners key) is reported, and judged, as 3.00
    const shown = Number(x.toFixed(digits));
    const ok = Number.isFinite(x) ? shown <= max : undefined;
    targets.push({
      name,
      value: `${fmt(x, digits)} ${unit}`,
      target: `≤ ${max} ${unit}`,
      ok,
      by: ok === undefined ? '' : ok ? (shown === max ? 'at the bound' : `${(((max - shown) / max) * 100).toFixed(0)}% under`) : `${(((shown - max) / max) * 100).toFixed(0)}% over`,
    });
  };
  ratioTarget('add, one by one', med('relq', 'addOne.rate'), med('bullmq', 'addOne.rate'), 2.2);
  ratioTarget('add, batches of 1,000', med('relq', 'addBatch.rate'), med('bullmq', 'addBatch.rate'), 5);
  ratioTarget('process, concurrency 10', med('relq', 'proc10.rate'), med('bullmq', 'proc10.rate'), 2.5);
  ratioTarget('process, concurrency 50', med('relq', 'proc50.rate'), med('bullmq', 'proc50.rate'), 3);
  ratioTarget(`batch mode* vs BullMQ's best (c=10/50)`, med('relq', 'procBatch.rate'), bullBest, 5);
  for (const [p, max] of [
    ['p50', 0.5],
    ['p99', 1.5],
  ] as const) {
    const x = med('relq', `lat.${p}`);
    const bee = med('bee-queue', `lat.${p}`);
    const ok = Number.isFinite(x) ? x <= max || x <= bee : undefined;
    targets.push({
      name: `latency ${p} at ${meta.cfg.latencyRate}/s, c=${meta.cfg.latencyConcurrency}`,
      value: `${fmt(x, 3)} ms (bee-queue ${fmt(bee, 3)} ms)`,
      target: `≤ ${max} ms or ≤ bee-queue`,
      ok,
      by: ok === undefined ? '' : x <= max ? `${(((max - x) / max) * 100).toFixed(0)}% under` : ok ? 'over the ms bound, under bee-queue' : `${(((x - max) / max) * 100).toFixed(0)}% over (bee-queue: ${fmt(bee, 3)} ms)`,
    });
  }
  maxTarget('Redis commands per add (one by one, incl. inside scripts)', med('relq', 'addOne.cmds'), 3, 'cmds');
  maxTarget('Redis commands per processed job (c=10, incl. inside scripts)', med('relq', 'proc10.cmds'), 5, 'cmds');
  maxTarget(`Redis memory per 10,000 waiting jobs (${meta.cfg.payloadBytes}-byte payload)`, med('relq', 'mem.mib'), 3.5, 'MiB');
  maxTarget(`idle worker (c=${meta.cfg.latencyConcurrency}), commands/s`, med('relq', 'idle.cmdsPerSec'), 1, 'cmds/s');
  {
    const bl = meta.cfg.backlogs;
    const lo = bl.length ? med('relq', `backlog.${bl[0]}`) : NaN;
    const hiB = [...bl].reverse().find((b) => get('relq', `backlog.${b}`).length > 0);
    const hi = hiB !== undefined ? med('relq', `backlog.${hiB}`) : NaN;
    const x = hi / lo;
    const ok = Number.isFinite(x) && hiB !== bl[0] ? x >= 0.9 : undefined;
    targets.push({
      name: `throughput at ${hiB !== undefined ? fmt(hiB, 0) : '?'} backlog vs ${fmt(bl[0] ?? NaN, 0)}${hiB !== 1_000_000 ? ' (1M not run)' : ''}`,
      value: Number.isFinite(x) ? `${x.toFixed(2)}× (${fmt(hi, 0)} vs ${fmt(lo, 0)} jobs/s)` : '–',
      target: '≥ 0.9×',
      ok,
      by: ok === undefined ? '' : ok ? `+${(((x - 0.9) / 0.9) * 100).toFixed(0)}%` : `${(((x - 0.9) / 0.9) * 100).toFixed(0)}%`,
    });
  }
  L.push('## Targets (same-run medians)', '');
  L.push('| target | relq | goal | met? | margin |', '| --- | --- | --- | --- | --- |');
  for (const t of targets) L.push(`| ${t.name} | ${t.value} | ${t.target} | ${t.ok === undefined ? 'n/a' : t.ok ? '**yes**' : '**no**'} | ${t.by} |`);
  L.push('');
  L.push(batchNote(meta));
  L.push('');

  // ---- throughput
  L.push(`## Throughput, jobs/s (${medNote})`, '');
  const head = ['figure', ...libs.map((l) => LABEL[l]!), 'relq / BullMQ', 'relq / bee-queue', ...(floors.length ? ['relq / floor (the faster)'] : [])];
  L.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  const rows: Array<[string, string]> = [
    ['add, awaited one by one', 'addOne.rate'],
    [`add, batches of ${fmt(meta.cfg.addBatch, 0)}`, 'addBatch.rate'],
    ['process pre-filled queue, concurrency 1', 'proc1.rate'],
    ['process, concurrency 10', 'proc10.rate'],
    ['process, concurrency 50', 'proc50.rate'],
  ];
  for (const [label, m] of rows) {
    const cols = libs.map((l) => cell(l, `${m}`, 0));
    const extra = [ratio(med('relq', m), med('bullmq', m)), ratio(med('relq', m), med('bee-queue', m))];
    if (floors.length) extra.push(floorRatio(m));
    L.push(`| ${label} | ${cols.join(' | ')} | ${extra.join(' | ')} |`);
  }
  {
    const m = 'procBatch.rate';
    const cols = libs.map((l) => (l === 'relq' ? cell(l, m, 0) : '–'));
    const extra = [
      `${ratio(med('relq', m), bullBest)} (vs BullMQ best)`,
      ratio(med('relq', m), Math.max(med('bee-queue', 'proc10.rate'), med('bee-queue', 'proc50.rate'))) + ' (vs best)',
    ];
    if (floors.length) extra.push('–');
    L.push(`| relq batch mode*: ${batchLabel(meta)} | ${cols.join(' | ')} | ${extra.join(' | ')} |`);
  }
  L.push('');
  L.push('Processing rate = (jobs − 1) / (time from the first to the last completion reported by the library), so worker start-up is excluded. Handlers are empty `async` functions. The ioredis floor does `LPUSH` per add (batches: a pipeline of 1,000) and `BRPOP` + `JSON.parse` per job on one connection per concurrency slot: no leases, no retries, no acknowledgement. The ioredis batch floor adds as the floor does and processes in two lanes (one at c=1) of up to half the slots each: `RPOP key count` (`BLMPOP` when the list is empty), the handlers of the batch at once, one `INCRBY` acknowledging the batch, pipelined with the lane\'s next `RPOP`: one round trip per batch, no guarantees. "relq / floor" is against the faster of the two floors at that figure, named (naive or batch).');
  L.push('');
  L.push('![throughput by concurrency](throughput.svg)', '');

  // ---- latency
  L.push(`## End-to-end latency at a steady ${meta.cfg.latencyRate} jobs/s, concurrency ${meta.cfg.latencyConcurrency} (ms, ${medNote})`, '');
  L.push(`From just before \`add()\` is called to the start of the handler, producer and worker in one process on separate connections; ${fmt(meta.cfg.latencyRate * meta.cfg.latencySec, 0)} jobs over ${meta.cfg.latencySec} s per rep, the first 10% dropped as warm-up.`, '');
  L.push(`| | ${libs.map((l) => LABEL[l]).join(' | ')} | relq / BullMQ | relq / bee-queue |`, `| --- | ${libs.map(() => '---').join(' | ')} | --- | --- |`);
  for (const [label, m, d] of [
    ['p50', 'lat.p50', 3],
    ['p95', 'lat.p95', 3],
    ['p99', 'lat.p99', 3],
    ['rate achieved (jobs/s)', 'lat.rate', 0],
    ['Node CPU while running (% of one core)', 'lat.nodeCpuPct', 1],
    ['Redis CPU while running (% of one core)', 'lat.redisCpuPct', 1],
    ['Redis commands per job', 'lat.cmds', 2],
  ] as Array<[string, string, number]>) {
    L.push(`| ${label} | ${libs.map((l) => cell(l, m, d)).join(' | ')} | ${ratio(med('relq', m), med('bullmq', m))} | ${ratio(med('relq', m), med('bee-queue', m))} |`);
  }
  L.push('');

  // ---- latency under load
  L.push(...latencyLoadSection(meta, { libs: qlibs, label: LABEL, cell, med, ratio, get }));

  // ---- several worker processes
  if (qlibs.some((l) => get(l, 'procs4.rate').length)) {
    L.push(`## ${PROCESSES} worker processes on one Redis (concurrency 10 each, ${medNote})`, '');
    L.push(
      `A pre-filled queue of ${fmt(meta.cfg.n, 0)} jobs, then ${PROCESSES} child processes, each with one worker of concurrency 10 and an empty handler. Jobs/s from the first handler start in any process to the last completion in any; Redis commands and CPU per job over the whole phase (the workers' start-up included); Node CPU of the ${PROCESSES} processes together; shares of the jobs, largest to smallest (median of each rank).`,
      '',
    );
    L.push(`| | ${qlibs.map((l) => LABEL[l]).join(' | ')} | relq / BullMQ | relq / bee-queue |`, `| --- | ${qlibs.map(() => '---').join(' | ')} | --- | --- |`);
    for (const [label, m, d] of [
      ['jobs/s, all processes', 'procs4.rate', 0],
      ['Redis CPU µs per job', 'procs4.redisCpuUs', 1],
      ['Redis commands per job', 'procs4.cmds', 2],
      ['Node CPU µs per job (all processes)', 'procs4.nodeCpuUs', 1],
    ] as Array<[string, string, number]>) {
      L.push(`| ${label} | ${qlibs.map((l) => cell(l, m, d)).join(' | ')} | ${ratio(med('relq', m), med('bullmq', m))} | ${ratio(med('relq', m), med('bee-queue', m))} |`);
    }
    const shares = (l: string) => (get(l, 'procs4.share1').length ? Array.from({ length: PROCESSES }, (_, i) => fmt(med(l, `procs4.share${i + 1}`), 0)).join(' / ') : '–');
    L.push(`| shares of the jobs (%) | ${qlibs.map(shares).join(' | ')} | | |`);
    L.push('');
  }

  // ---- redis work
  L.push('## Work per job', '');
  L.push('Redis commands per job from `INFO commandstats` over the whole phase (`CONFIG RESETSTAT` before it): every command Redis executed, including `FCALL` (or `EVALSHA`/`EVAL`) itself, each command run inside it, `MULTI`/`EXEC`, blocking pops, and the workers\' start-up commands. Client commands per job (≈ round trips) from `MONITOR` on a short separate run of ' + fmt(meta.cfg.monitorJobs, 0) + ' jobs: each command a client sent counts once, a `MULTI…EXEC` block counts once. CPU per job: Node `process.cpuUsage()` of the bench process (library + bench loop) and Redis `used_cpu_user+sys`, over the phase.', '');
  L.push(`| per job | ${libs.map((l) => LABEL[l]).join(' | ')} | relq / BullMQ | relq / bee-queue |`, `| --- | ${libs.map(() => '---').join(' | ')} | --- | --- |`);
  const work: Array<[string, string, number]> = [
    ['Redis commands per add (one by one)', 'addOne.cmds', 2],
    ['Redis commands per add (batches)', 'addBatch.cmds', 2],
    ['Redis commands per processed job, c=1', 'proc1.cmds', 2],
    ['Redis commands per processed job, c=10', 'proc10.cmds', 2],
    ['Redis commands per processed job, c=50', 'proc50.cmds', 2],
    ['Redis commands per processed job, relq batch mode*', 'procBatch.cmds', 2],
    ['client commands (round trips) per add, MONITOR', 'rt.add', 2],
    ['client commands (round trips) per processed job, c=10, MONITOR', 'rt.proc', 2],
    ['all commands per add, MONITOR (cross-check)', 'mon.addTotal', 2],
    ['all commands per processed job, c=10, MONITOR (cross-check)', 'mon.procTotal', 2],
    ['Node CPU µs per add (one by one)', 'addOne.nodeCpuUs', 1],
    ['Node CPU µs per add (batches)', 'addBatch.nodeCpuUs', 1],
    ['Node CPU µs per processed job, c=1', 'proc1.nodeCpuUs', 1],
    ['Node CPU µs per processed job, c=10', 'proc10.nodeCpuUs', 1],
    ['Node CPU µs per processed job, c=50', 'proc50.nodeCpuUs', 1],
    ['Redis CPU µs per add (one by one)', 'addOne.redisCpuUs', 1],
    ['Redis CPU µs per add (batches)', 'addBatch.redisCpuUs', 1],
    ['Redis CPU µs per processed job, c=10', 'proc10.redisCpuUs', 1],
    ['Redis CPU µs per processed job, c=50', 'proc50.redisCpuUs', 1],
  ];
  for (const [label, m, d] of work) {
    if (libs.every((l) => get(l, m).length === 0)) continue;
    L.push(`| ${label} | ${libs.map((l) => cell(l, m, d)).join(' | ')} | ${ratio(med('relq', m), med('bullmq', m))} | ${ratio(med('relq', m), med('bee-queue', m))} |`);
  }
  L.push('');

  // ---- memory, idle
  L.push('## Memory and idle cost', '');
  L.push(`| | ${libs.map((l) => LABEL[l]).join(' | ')} | relq / BullMQ | relq / bee-queue |`, `| --- | ${libs.map(() => '---').join(' | ')} | --- | --- |`);
  L.push(`| Redis memory per 10,000 waiting jobs (MiB, \`used_memory\` delta) | ${libs.map((l) => cell(l, 'mem.mib', 2)).join(' | ')} | ${ratio(med('relq', 'mem.mib'), med('bullmq', 'mem.mib'))} | ${ratio(med('relq', 'mem.mib'), med('bee-queue', 'mem.mib'))} |`);
  L.push(`| commands/s of an idle worker (c=${meta.cfg.latencyConcurrency}, ${meta.cfg.idleSec} s window) | ${libs.map((l) => (isFloor(l) ? '–' : cell(l, 'idle.cmdsPerSec', 2))).join(' | ')} | ${ratio(med('relq', 'idle.cmdsPerSec'), med('bullmq', 'idle.cmdsPerSec'))} | ${ratio(med('relq', 'idle.cmdsPerSec'), med('bee-queue', 'idle.cmdsPerSec'))} |`);
  L.push('');
  L.push(`Memory: ${fmt(meta.cfg.memJobs, 0)} jobs added in batches after one warm-up job (scripts loaded, keys created), \`used_memory\` delta scaled to 10,000; BullMQ's figure includes its events stream (capped at ~10,000 entries). Idle: a worker on an empty queue, measured after ${(meta.cfg.quick ? '0.3 s' : '2 s')} of settling, once per run; it counts every command (blocking pops, script calls and the commands inside them, timers' housekeeping).`);
  const idleBd = qlibs.map((l) => {
    const b = r.breakdown[l]?.idle;
    return b ? `${LABEL[l]}: ${Object.entries(b).map(([k, v]) => `${k} ${v.toFixed(2)}/s`).join(', ') || 'nothing'}` : '';
  }).filter(Boolean);
  if (idleBd.length) L.push('', `Idle breakdown — ${idleBd.join('; ')}.`);
  L.push('');

  L.push(...payloadSection(meta, { libs, label: LABEL, cell, med, ratio, floorRatio }));

  // ---- backlog
  const bl = meta.cfg.backlogs.filter((b) => get('relq', `backlog.${b}`).length > 0);
  if (bl.length) {
    L.push(`## relq throughput by backlog (concurrency 10, jobs/s, ${medNote})`, '');
    L.push(`| backlog | ${bl.map((b) => fmt(b, 0)).join(' | ')} |`, `| --- | ${bl.map(() => '---').join(' | ')} |`);
    L.push(`| jobs/s | ${bl.map((b) => cell('relq', `backlog.${b}`, 0)).join(' | ')} |`);
    L.push(`| vs ${fmt(bl[0]!, 0)} | ${bl.map((b) => ratio(med('relq', `backlog.${b}`), med('relq', `backlog.${bl[0]}`))).join(' | ')} |`);
    L.push(`| Redis MiB per 10,000 waiting (at that size) | ${bl.map((b) => cell('relq', `backlogMem.${b}`, 2)).join(' | ')} |`);
    L.push('');
    L.push(`One worker; the queue is paused while it is filled and time runs from \`resume()\` to the last counted completion. Backlogs ≥ N: N jobs are taken from the top of the backlog (it never drops below backlog − N) and it is topped up between reps. Smaller backlogs: cycles of fill / drain until ${fmt(meta.cfg.smallBacklogJobs ?? meta.cfg.n, 0)} jobs are done, only the draining timed. Memory: what the queue's keys take once filled (\`MEMORY USAGE\` of each).`);
    L.push('');
  }
  // ---- grouped work against groupmq
  if (['relq', 'groupmq'].some((l) => get(l, 'grouped.uniform.rate').length)) {
    const size = groupedSizes(meta.cfg.n, meta.cfg.quick);
    L.push(`## Grouped work: relq against groupmq (100 groups, one job at a time per group, one worker of 10 slots; ${medNote})`, '');
    L.push('| figure | relq | groupmq | relq / groupmq |', '| --- | --- | --- | --- |');
    for (const [label, m, d] of [
      [`uniform, ${fmt(size.uniform, 0)} jobs over 100 groups: jobs/s`, 'grouped.uniform.rate', 0],
      ['uniform: Redis commands per job', 'grouped.uniform.cmds', 2],
      ['uniform: Redis CPU µs per job', 'grouped.uniform.redisCpuUs', 1],
      [`skewed, one group of ${fmt(size.big, 0)} beside 99 of ${fmt(size.perSmall, 0)}: jobs/s`, 'grouped.skewed.rate', 0],
      ['skewed: Redis commands per job', 'grouped.skewed.cmds', 2],
      ['skewed: small groups served, p50 over the 99 of the time to their first completion (ms, lower is better)', 'grouped.skewed.smallServedP50Ms', 1],
      [`one group at its limit, ${fmt(size.single, 0)} jobs: jobs/s`, 'grouped.single.rate', 0],
      ['one group: Redis commands per job', 'grouped.single.cmds', 2],
    ] as Array<[string, string, number]>) {
      L.push(`| ${label} | ${cell('relq', m, d)} | ${cell('groupmq', m, d)} | ${ratio(med('relq', m), med('groupmq', m))} |`);
    }
    L.push('');
    L.push(
      "relq with the queue option `groupConcurrency: 1`, groupmq as it always runs (one job at a time per group, in order); otherwise each as in the configuration below. Each workload is added in batches of 1,000 (groupmq: `autoBatch`) before the worker starts; no-op handlers; jobs/s from the first to the last completion, commands and CPU over the whole phase. Skewed: the big group's jobs are added first, then the small groups' round-robin; a small group is served at its first completion, timed from the worker's start. Without groupmq in `--libs`, relq runs alone.",
      '',
    );
    for (const w of ['uniform', 'skewed', 'single']) {
      const parts = ['relq', 'groupmq']
        .map((l) => [l, r.breakdown[l]?.[`grouped.${w}`]] as const)
        .filter(([, b]) => b && Object.keys(b).length)
        .map(([l, b]) => `${LABEL[l]}: ${perJobText(b!)}`);
      if (parts.length) L.push(`- ${w}, commands per job by command (last rep) — ${parts.join('; ')}`);
    }
    L.push('');
  }
  // ---- features' own costs (relq only; absent from runs that skipped them)
  if (get('relq', 'limited.none.cmdsPerJob').length || get('relq', 'scheduler.idleTick.cmds').length) {
    L.push('## Rate limits and schedulers (relq only, once per run)', '');
    L.push('| figure | value |', '| --- | --- |');
    for (const [label, metric, digits] of [
      ['jobs/s without a limiter (one worker, c=10)', 'limited.none.jobsPerSec', 0],
      ['jobs/s, queue limiter that never binds', 'limited.open.jobsPerSec', 0],
      ['commands per job without a limiter', 'limited.none.cmdsPerJob', 2],
      ['commands per job, limiter that never binds', 'limited.open.cmdsPerJob', 2],
      ['jobs/s, limiter of 500 per 500 ms (binding)', 'limited.binding.jobsPerSec', 0],
      ['commands per job, binding limiter', 'limited.binding.cmdsPerJob', 2],
      ['scheduler tick with nothing due: commands', 'scheduler.idleTick.cmds', 1],
      ['scheduler tick with nothing due: ms', 'scheduler.idleTick.ms', 2],
      ['scheduler tick with 100 schedulers due: commands', 'scheduler.dueTick.cmds', 0],
      ['scheduler tick with 100 schedulers due: ms', 'scheduler.dueTick.ms', 2],
      ['scheduler tick: Redis CPU µs per due scheduler', 'scheduler.dueTick.redisCpuUsPerScheduler', 1],
    ] as const) {
      if (get('relq', metric).length) L.push(`| ${label} | ${cell('relq', metric, digits)} |`);
    }
    L.push('');
  }
  if (get('relq', 'fleet.none.cmdsPerJob').length) {
    L.push('## Limits the fleet shares (relq only, once per run; docs/concurrency.md)', '');
    L.push('| figure | jobs/s (one worker, c=10) | commands per job |', '| --- | --- | --- |');
    for (const [label, key] of [
      ['no queue-wide limit', 'none'],
      ['globalConcurrency that never binds', 'global-open'],
      ['globalConcurrency 5 (binding)', 'global-binding'],
      ['20 groups, groupConcurrency 2', 'groups'],
      ['the same, 10 groups with an override of 3', 'groups-overridden'],
    ] as const) {
      if (get('relq', `fleet.${key}.cmdsPerJob`).length) L.push(`| ${label} | ${cell('relq', `fleet.${key}.jobsPerSec`, 0)} | ${cell('relq', `fleet.${key}.cmdsPerJob`, 2)} |`);
    }
    L.push('');
  }
  if (get('relq', 'metricsHistory.off.rate').length) {
    L.push('## Metrics history (relq only, once per run; docs/observability.md)', '');
    L.push('| queue | jobs/s (one worker, c=10, median of 3) | of without |', '| --- | --- | --- |');
    for (const [label, key] of [
      ['without the `metrics` option', 'off'],
      ['`metrics: true`', 'kept'],
    ] as const) {
      L.push(`| ${label} | ${cell('relq', `metricsHistory.${key}.rate`, 0)} | ${cell('relq', `metricsHistory.${key}.ratio`, 3)} |`);
    }
    L.push('');
  }
  for (const n of r.notes) L.push(`Note: ${n}`, '');

  // ---- floor
  if (Object.keys(r.floor).length) {
    L.push('## The floor: `redis-benchmark` on the same server (requests/s)', '');
    L.push(`| ${Object.keys(r.floor).join(' | ')} |`, `| ${Object.keys(r.floor).map(() => '---').join(' | ')} |`);
    L.push(`| ${Object.values(r.floor).map((v) => fmt(v, 0)).join(' | ')} |`);
    L.push('');
    const ping1 = r.floor['PING c=1'];
    const eval1 = r.floor['EVALSHA c=1'];
    const ping10 = r.floor['PING c=10'];
    const parts: string[] = [];
    if (ping1) parts.push(`relq add one by one = ${ratio(med('relq', 'addOne.rate'), ping1)} of PING c=1 (one awaited round trip each), ${ratio(med('relq', 'addOne.rate'), eval1 ?? NaN)} of a no-op EVALSHA c=1`);
    if (libs.includes('ioredis')) parts.push(`${ratio(med('relq', 'addOne.rate'), med('ioredis', 'addOne.rate'))} of ioredis LPUSH one by one`);
    if (floors.length) parts.push(`process c=10 = ${floorRatio('proc10.rate')} of the faster ioredis floor at c=10`);
    if (ping10) parts.push(`${ratio(med('relq', 'proc10.rate'), ping10)} of PING c=10`);
    L.push(`relq as a fraction of the floor: ${parts.join('; ')}.`, '');
    L.push('redis-benchmark is a C client in its own process (the other core), so it is a ceiling for what any Node client can reach here.', '');
  }

  // ---- breakdown
  L.push('## Commands per job, by command (last rep)', '');
  for (const phase of ['addOne', 'addBatch', 'proc10', 'proc1', 'procBatch']) {
    const rowsB = qlibs
      .map((l) => [l, r.breakdown[l]?.[phase]] as const)
      .filter(([, b]) => b && Object.keys(b).length);
    if (!rowsB.length) continue;
    L.push(`**${phase}**`, '');
    for (const [l, b] of rowsB) L.push(`- ${LABEL[l]}: ${perJobText(b!)}`);
    L.push('');
  }

  // ---- foreign load
  if (r.foreign && r.foreign.length) {
    const xs = [...r.foreign].sort((a, b) => a - b);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const p90 = xs[Math.floor(xs.length * 0.9)]!;
    L.push('## Load from other processes during the run', '');
    L.push(`Other processes on this ${meta.nproc}-core machine used ${mean.toFixed(2)} cores on average during the run (p90 ${p90.toFixed(2)}, max ${xs[xs.length - 1]!.toFixed(2)}; /proc/stat minus the bench and its Redis, sampled every 0.5 s). Mean foreign load during each measurement (cores, median over reps):`, '');
    const phases: Array<[string, string]> = [
      ['addOne', 'add one by one'],
      ['addBatch', 'add batches'],
      ['proc1', 'process c=1'],
      ['proc10', 'process c=10'],
      ['proc50', 'process c=50'],
      ['procBatch', 'relq batch*'],
      ['lat', 'latency'],
      ['latLoadMax', 'maximum end to end'],
      ['latLoad', 'latency under load'],
      ['procs4', `${PROCESSES} processes`],
    ];
    L.push(`| | ${phases.map(([, l]) => l).join(' | ')} |`, `| --- | ${phases.map(() => '---').join(' | ')} |`);
    for (const l of libs) L.push(`| ${LABEL[l]} | ${phases.map(([p]) => cell(l, `${p}.foreign`, 2)).join(' | ')} |`);
    L.push('');
  }

  // ---- configuration
  L.push('## Configuration (fairness)', '');
  L.push('Each library runs with its defaults except what is listed; all remove completed jobs at once, none has an event listener in the bench.', '');
  for (const l of [...libs, ...(meta.cfg.libs.includes('groupmq') ? (['groupmq'] as const) : [])]) {
    L.push(`- **${LABEL[l]}**: ${ADAPTERS[l].settings.join(' ')}`);
  }
  L.push(`- All: a fresh queue (\`FLUSHALL\`) before every measurement; producer and worker objects are created per measurement; \`--expose-gc\` and a GC before each; ioredis ${meta.libs.ioredis} for relq, BullMQ and the floors, node-redis 3 (bee-queue's own dependency) for bee-queue.`);
  L.push('');
  L.push(END);

  const generated = L.join('\n');
  let out: string;
  if (existsSync(mdPath)) {
    const old = readFileSync(mdPath, 'utf8');
    const a = old.indexOf(BEGIN);
    const b = old.indexOf(END);
    out = a >= 0 && b > a ? old.slice(0, a) + generated + old.slice(b + END.length) : `${old.trimEnd()}\n\n${generated}\n`;
  } else {
    out = `# relq benchmarks\n\n${generated}\n`;
  }
  writeFileSync(mdPath, out);
  writeFileSync(svgPath, chart(meta, r));
}

/** One phase's commands per job, most called first (those under 0.005 left out). */
function perJobText(b: Record<string, number>): string {
  return Object.entries(b)
    .sort((a, c) => c[1] - a[1])
    .filter(([, v]) => v >= 0.005)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}

function batchLabel(meta: RunMeta): string {
  const c = meta.cfg.batchConcurrency ?? 1;
  return meta.cfg.batchMode === 'BatchWorker'
    ? `BatchWorker, size ${meta.cfg.batchSize}, ${c} at once`
    : `lease({count: ${meta.cfg.batchSize}}) + ackBatch`;
}

function batchNote(meta: RunMeta): string {
  const c = meta.cfg.batchConcurrency ?? 1;
  return meta.cfg.batchMode === 'BatchWorker'
    ? `\\* Batch mode: the engine's \`BatchWorker\` (batch-handler mode), \`size: ${meta.cfg.batchSize}, concurrency: ${c}\` (${c === 1 ? 'one batch' : `${c} batches`} at once, ${c * meta.cfg.batchSize} jobs in flight), one worker, handler called with the whole batch.`
    : `\\* Batch mode: the benchmarked engine has no batch-handler mode; this row is relq's own \`lease({ count: ${meta.cfg.batchSize} })\` + \`ackBatch()\` loop (${c === 1 ? 'one loop' : `${c} loops`}, two round trips per ${meta.cfg.batchSize} jobs).`;
}

// ---- SVG -----------------------------------------------------------------------------

const COLORS: Record<string, string> = { relq: '#d9480f', bullmq: '#1c7ed6', 'bee-queue': '#f59f00', ioredis: '#868e96', 'ioredis-batch': '#343a40' };

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function niceMax(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

export function chart(meta: RunMeta, r: BenchResults): string {
  const libs = LIBS.filter((l) => meta.cfg.libs.includes(l));
  const groups: Array<{ label: string; metric: string; libs: string[] }> = [
    { label: 'concurrency 1', metric: 'proc1.rate', libs },
    { label: 'concurrency 10', metric: 'proc10.rate', libs },
    { label: 'concurrency 50', metric: 'proc50.rate', libs },
    { label: `relq batch*`, metric: 'procBatch.rate', libs: ['relq'] },
  ].filter((g) => g.libs.some((l) => (r.samples[l]?.[g.metric] ?? []).length));
  const vals = groups.flatMap((g) => g.libs.flatMap((l) => r.samples[l]?.[g.metric] ?? []));
  const ymax = niceMax(Math.max(1, ...vals));
  const W = 760;
  const H = 420;
  const m = { l: 70, r: 20, t: 50, b: 80 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const y = (v: number) => m.t + ph - (v / ymax) * ph;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">Processing throughput by concurrency (jobs/s, higher is better)</text>`);
  out.push(`<text x="${W / 2}" y="39" text-anchor="middle" fill="#555">${esc(`N=${meta.cfg.n}, ${meta.cfg.payloadBytes}-byte payload, ${meta.cfg.reps > 1 ? `median of ${meta.cfg.reps} reps, whiskers min–max` : '1 rep'}; ${meta.nproc} cores, Redis ${meta.redis}, ${meta.date.slice(0, 10)}`)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (ymax / 5) * i;
    out.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e9ecef"/>`);
    out.push(`<text x="${m.l - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#444">${Math.round(v).toLocaleString('en-US')}</text>`);
  }
  const gw = pw / Math.max(1, groups.length);
  groups.forEach((g, gi) => {
    const present = g.libs.filter((l) => (r.samples[l]?.[g.metric] ?? []).length);
    const bw = Math.min(38, (gw * 0.8) / Math.max(1, present.length));
    const x0 = m.l + gi * gw + (gw - bw * present.length) / 2;
    present.forEach((l, li) => {
      const xs = r.samples[l]![g.metric]!;
      const med = median(xs);
      const [lo, hi] = range(xs);
      const x = x0 + li * bw;
      out.push(`<rect x="${(x + 2).toFixed(1)}" y="${y(med).toFixed(1)}" width="${(bw - 4).toFixed(1)}" height="${(m.t + ph - y(med)).toFixed(1)}" fill="${COLORS[l]}"><title>${esc(`${LABEL[l]} ${g.label}: ${Math.round(med)} jobs/s`)}</title></rect>`);
      if (xs.length > 1) {
        const cx = (x + bw / 2).toFixed(1);
        out.push(`<line x1="${cx}" x2="${cx}" y1="${y(lo).toFixed(1)}" y2="${y(hi).toFixed(1)}" stroke="#212529"/>`);
        out.push(`<line x1="${(x + bw / 2 - 4).toFixed(1)}" x2="${(x + bw / 2 + 4).toFixed(1)}" y1="${y(hi).toFixed(1)}" y2="${y(hi).toFixed(1)}" stroke="#212529"/>`);
        out.push(`<line x1="${(x + bw / 2 - 4).toFixed(1)}" x2="${(x + bw / 2 + 4).toFixed(1)}" y1="${y(lo).toFixed(1)}" y2="${y(lo).toFixed(1)}" stroke="#212529"/>`);
      }
      out.push(`<text x="${(x + bw / 2).toFixed(1)}" y="${(y(Math.max(med, hi)) - 5).toFixed(1)}" text-anchor="middle" font-size="10" fill="#333">${med >= 10000 ? `${(med / 1000).toFixed(0)}k` : med >= 1000 ? `${(med / 1000).toFixed(1)}k` : Math.round(med)}</text>`);
    });
    out.push(`<text x="${(m.l + gi * gw + gw / 2).toFixed(1)}" y="${m.t + ph + 20}" text-anchor="middle" fill="#222">${esc(g.label)}</text>`);
  });
  out.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${m.t + ph}" y2="${m.t + ph}" stroke="#495057"/>`);
  let lx = m.l;
  for (const l of libs) {
    out.push(`<rect x="${lx}" y="${H - 32}" width="12" height="12" fill="${COLORS[l]}"/>`);
    out.push(`<text x="${lx + 17}" y="${H - 22}" fill="#222">${esc(LABEL[l]!)}</text>`);
    lx += 30 + LABEL[l]!.length * 7;
  }
  out.push(`<text x="${W - m.r}" y="${H - 22}" text-anchor="end" fill="#666" font-size="10">${esc(meta.cfg.batchMode === 'BatchWorker' ? `* BatchWorker, size ${meta.cfg.batchSize}, ${meta.cfg.batchConcurrency ?? 1} at once` : '* lease({count}) + ackBatch loop (no batch-handler mode)')}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
