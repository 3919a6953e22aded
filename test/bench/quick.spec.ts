/**
 * The benchmark's short mode works end to end: `npm run bench -- --quick --ref HEAD` starts its own
 * redis-server, runs relq, BullMQ, bee-queue and the raw-ioredis floors (and groupmq on grouped
 * work), the queues also in four worker processes and under load, and writes the report, the
 * chart and the raw numbers. Speed is not asserted here (see bench/RESULTS.md).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnGuarded, type GuardedProcess } from '../../tools/process-guard.js';

const LIBS = ['relq', 'bullmq', 'bee-queue', 'ioredis'];

// The bench leads its own process group under a watchdog (spawnGuarded). After a failure or
// a timeout too: SIGTERM lets it stop its redis-server, then what is left of the group is
// SIGKILLed (the server's own watchdog follows within a second).
let bench: GuardedProcess | undefined;
afterAll(() => bench?.stop('SIGTERM', 5000));

// One run serves both tests: every library at --quick, and lib/ at HEAD beside the working tree.
let dir: string | undefined;
let run: { samples: Record<string, Record<string, number[]>>; md: string; svg: string };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relq-bench-'));
  run = await runBench(dir, ['--quick', '--ref', 'HEAD', '--backlogs', '1000']);
}, 400_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `npm run bench` with `args` into `dir`; its raw numbers and report. */
async function runBench(dir: string, args: string[]): Promise<{ samples: Record<string, Record<string, number[]>>; md: string; svg: string }> {
  const out = { md: join(dir, 'RESULTS.md'), json: join(dir, 'results.json'), svg: join(dir, 'throughput.svg') };
  bench = spawnGuarded(process.execPath, ['tools/run-bench.mjs', ...args, '--out', out.md, '--json', out.json, '--svg', out.svg], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = bench.child;
  let log = '';
  child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`bench exited with ${code}:\n${log.slice(-3000)}`);
  const { results } = JSON.parse(readFileSync(out.json, 'utf8')) as { results: { samples: Record<string, Record<string, number[]>> } };
  return { samples: results.samples, md: readFileSync(out.md, 'utf8'), svg: readFileSync(out.svg, 'utf8') };
}

test('npm run bench -- --quick measures every library and writes report, chart and numbers', () => {
  const { samples, md, svg } = run;
  for (const lib of LIBS) {
    for (const figure of ['addOne.rate', 'addBatch.rate', 'proc10.rate', 'lat.p50']) {
      const values = samples[lib]?.[figure] ?? [];
      expect([lib, figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([lib, figure, true]);
    }
  }
  expect(samples.relq!['procBatch.rate']!.every((v) => v > 0)).toBe(true);
  // the batch floor processes (its adds are the floor's) and is a floor of the ratios
  for (const figure of ['proc1.rate', 'proc10.rate', 'proc50.rate', 'proc10.nodeCpuUs', 'lat.p50']) {
    const values = samples['ioredis-batch']?.[figure] ?? [];
    expect([figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([figure, true]);
  }
  expect(samples['ioredis-batch']?.['addOne.rate']).toBeUndefined();
  expect(md).toMatch(/\| process, concurrency 50 \|.*\| [\d.]+× \((naive|batch)\) \|\n/);
  // larger payloads: every queue and the floors, jobs/s and CPU per job
  for (const lib of [...LIBS, 'ioredis-batch']) {
    for (const kib of [10, 100]) {
      const phases = lib === 'ioredis-batch' ? ['proc10'] : ['addOne', 'addBatch', 'proc10'];
      for (const figure of phases.flatMap((p) => ['rate', 'redisCpuUs', 'nodeCpuUs'].map((x) => `pay${kib}k.${p}.${x}`))) {
        const values = samples[lib]?.[figure] ?? [];
        expect([lib, figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([lib, figure, true]);
      }
    }
  }
  expect(md).toContain('## Larger payloads: 10 and 100 KiB of JSON');
  for (const lib of ['relq', 'groupmq']) {
    for (const figure of ['grouped.uniform.rate', 'grouped.skewed.smallServedP50Ms', 'grouped.single.cmds']) {
      const values = samples[lib]?.[figure] ?? [];
      expect([lib, figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([lib, figure, true]);
    }
  }
  expect(md).toContain('## Grouped work: relq against groupmq');
  // four worker processes, and latency at 80 % of each library's own maximum: the queues, not the floor
  for (const lib of ['relq', 'bullmq', 'bee-queue']) {
    for (const figure of ['procs4.rate', 'procs4.redisCpuUs', 'procs4.cmds', 'procs4.share4', 'latLoad.p50', 'latLoad.p95', 'latLoad.p99', 'latLoad.rate']) {
      const values = samples[lib]?.[figure] ?? [];
      expect([lib, figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([lib, figure, true]);
    }
  }
  expect(md).toContain('## 4 worker processes on one Redis');
  expect(md).toContain("## Latency under load: 80 % of each library's own maximum");

  expect(md).toContain('## Targets (same-run medians)');
  const targetRows = md.split('## Targets')[1]!.split('\n## ')[0]!.split('\n').filter((l) => /^\| .+ \| \*\*(yes|no)\*\*|n\/a/.test(l));
  expect(targetRows.length).toBeGreaterThanOrEqual(10);
  expect(svg).toMatch(/^<svg[\s>]/);
});

test('npm run bench -- --ref measures the ref build beside the working tree and compares every figure', () => {
  const { samples, md } = run;
  for (const lib of ['relq', 'relq@ref']) {
    for (const figure of ['addTurnsOne.rate', 'addTurnsBatch.rate', 'procTurns10.rate', 'procTurnsBatch.rate', 'procTurns10.cmds']) {
      const values = samples[lib]?.[figure] ?? [];
      expect([lib, figure, values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0)]).toEqual([lib, figure, true]);
    }
  }
  // adds and processing: the two builds in turns for their comparison; the working tree's also alone
  expect([samples.relq?.['addOne.rate']?.length, samples['relq@ref']?.['addOne.rate']]).toEqual([1, undefined]);
  expect([samples.relq?.['proc10.rate']?.length, samples['relq@ref']?.['proc10.rate']]).toEqual([1, undefined]);
  for (const lib of ['relq', 'relq@ref']) expect([lib, samples[lib]?.['backlog.1000']?.length]).toEqual([lib, 1]);
  // latency: the two builds in turns for their comparison; the working tree's also alone, beside the other libraries
  for (const lib of ['relq', 'relq@ref']) expect([lib, samples[lib]?.['latTurns.p99turn']?.length]).toEqual([lib, 1]);
  expect([samples.relq?.['lat.p99']?.length, samples['relq@ref']?.['lat.p99']]).toEqual([1, undefined]);
  const section = md.split(/\n## relq against relq@[0-9a-f]+ \(lib\/ as committed\), same run\n/)[1]?.split('\n## ')[0];
  expect(section).toBeDefined();
  const rows = section!.split('\n').filter((l) => l.startsWith('| process, c=10, builds taking turns: ') || l.startsWith('| add, one by one, builds taking turns: '));
  expect(rows).toHaveLength(10); // jobs/s, commands, Redis CPU, Node CPU, time in scripts of each
  expect(section!.split('\n').filter((l) => l.startsWith('| latency '))).toHaveLength(6); // p50, p95, p99 per turn, Node CPU, Redis CPU, commands
  expect(section!.split('\n').filter((l) => l.startsWith('| process from a backlog of 1,000: '))).toHaveLength(1);
  expect(section).toMatch(/\d+ figures compared; /);
});
