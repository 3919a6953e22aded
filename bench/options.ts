/** `npm run bench` options: the command line (and --help) to the run's configuration. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ADAPTERS, type LibName } from './adapters.js';

const HELP = `npm run bench [-- options]
  --quick            N 2,000, 1 rep, 1 s latency/idle windows, 0.5 s latency-load windows, backlogs 1k/10k;
                     writes to .bench-tmp/
  --n N              jobs per figure (default 20,000)
  --reps R           repetitions (default 3)
  --batch-size B     relq lease({count}) size for the batch-mode row (default 100)
  --batch-concurrency C  batches at once in the batch-mode row (default 2)
  --libs a,b         subset of relq,relq@ref,bullmq,bee-queue,ioredis,ioredis-batch,groupmq (groupmq: the
                     grouped scenario only, which runs relq alone without it)
  --skip a,b         skip phases: floor,add,process,latency,latency-load,processes,memory,payloads,idle,monitor,
                     backlog,grouped,schedulers,rate-limited,fleet-limits,observability,metrics-history;
                     or libraries: any name of --libs (e.g. ioredis-batch)
  --backlogs a,b     relq backlog sizes (default 1000,100000,1000000)
  --out/--svg/--json output paths (default bench/RESULTS.md, bench/throughput.svg, bench/results.json)
  --quiet-budget S   seconds in all to wait for a quiet machine before measurements (default 150; quick 0)
  --ref GITREF       (run-bench only) also measure relq's lib/ as committed at GITREF ('relq@ref')
                     in the same run (processing, latency, backlog drains in turns with the working tree's);
                     RESULTS.md compares them
  --lib-at GITREF    (run-bench only) measure lib/ as committed at GITREF instead of the working tree's
  --profile          (run-bench only) profile relq processing at concurrency 10 instead
  --sandbox          (run-bench only) jobs/s of a handler file in threads and processes against in-process
                     instead (bench/sandbox-cost.ts: --n, --concurrency, --reps)`;

/** The repository (this file runs as <root>/.bench-tmp/bench/options.js). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export type BenchConfig = ReturnType<typeof readOptions>;

/** The run's configuration from `args` (default: this process's); --help prints the options and exits. */
export function readOptions(args: string[] = process.argv.slice(2)) {
  const { values: argv } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      n: { type: 'string' },
      reps: { type: 'string' },
      'batch-size': { type: 'string' },
      'batch-concurrency': { type: 'string' },
      libs: { type: 'string' },
      skip: { type: 'string' },
      backlogs: { type: 'string' },
      out: { type: 'string' },
      svg: { type: 'string' },
      json: { type: 'string' },
      command: { type: 'string' },
      help: { type: 'boolean', default: false },
      'quiet-budget': { type: 'string' },
    },
    allowPositionals: false,
  });
  if (argv.help) {
    console.log(HELP);
    process.exit(0);
  }
  const quick = argv.quick!;
  const skip = new Set(argv.skip?.split(',') ?? []);
  const n = Number(argv.n ?? (quick ? 2000 : 20_000));
  const cfg = {
    quick,
    n,
    reps: Number(argv.reps ?? (quick ? 1 : 3)),
    batchSize: Number(argv['batch-size'] ?? 100),
    batchConcurrency: Number(argv['batch-concurrency'] ?? 2),
    addBatch: 1000,
    concurrencies: [1, 10, 50],
    latencyRate: 500,
    latencySec: quick ? 1 : 10,
    /** each build's time in the --ref run in turns: its tail needs more turns than a solo run's 10 s give */
    latencyTurnsSec: quick ? 2 : 30,
    latencyConcurrency: 10,
    /** latency under load: each library adding at 80 % of its maximum end to end at c=10 for this long */
    latencyLoadSec: quick ? 0.5 : 10,
    /** latency under load: the window over which that maximum is measured */
    latencyLoadMaxSec: quick ? 0.5 : 2,
    /** turns per build of the --ref run's processing phases (bench/scenarios/process-turns.ts) and adds */
    procTurns: quick ? 3 : 10,
    addTurns: quick ? 4 : 20,
    idleSettleSec: quick ? 0.3 : 2,
    idleSec: quick ? 1 : 10,
    memJobs: 10_000,
    /**
     * The payloads scenario's sizes and jobs per figure: fewer of the larger, so that Redis holds
     * about 50 MB (10 KiB) and 200 MB (100 KiB) at most; batches of 100 (1 and 10 MiB per call).
     */
    payloadSizes: [
      { kib: 10, jobs: quick ? 40 : Math.ceil(n / 4) },
      { kib: 100, jobs: quick ? 20 : Math.ceil(n / 10) },
    ],
    payloadAddBatch: 100,
    monitorJobs: quick ? 300 : 2000,
    backlogs: argv.backlogs
      ? argv.backlogs.split(',').map(Number)
      : quick
        ? [1000, 10_000]
        : [1000, 100_000, 1_000_000],
    /** jobs a backlog smaller than N processes per rep, in drains of its size (a drain of 1,000 lasts about 40 ms) */
    smallBacklogJobs: quick ? 2000 : 100_000,
    benchmarkRequests: quick ? 10_000 : 100_000,
    /** before each measurement, wait up to 8 s for other processes to use < 0.3 cores; 150 s in all */
    quietBudgetMs: Number(argv['quiet-budget'] ?? (quick ? 0 : 150)) * 1000,
    libs: (argv.libs?.split(',') ?? ['relq', ...(process.env.RELQ_BENCH_REF_LIB ? ['relq@ref'] : []), 'bullmq', 'bee-queue', 'ioredis', 'ioredis-batch', 'groupmq']).filter(
      (l) => !skip.has(l),
    ) as LibName[],
    skip,
    out: resolve(argv.out ?? (quick ? `${root}/.bench-tmp/RESULTS.quick.md` : `${root}/bench/RESULTS.md`)),
    svg: resolve(argv.svg ?? (quick ? `${root}/.bench-tmp/throughput.quick.svg` : `${root}/bench/throughput.svg`)),
    json: resolve(argv.json ?? (quick ? `${root}/.bench-tmp/results.quick.json` : `${root}/bench/results.json`)),
    command: argv.command ?? process.env.RELQ_BENCH_CMD ?? `npm run bench -- ${args.join(' ')}`.replace(/ -- $/, ''),
  };
  for (const l of cfg.libs) if (!ADAPTERS[l]) throw new Error(`unknown lib ${l}`);
  if (cfg.libs.includes('relq@ref') && !process.env.RELQ_BENCH_REF_LIB) throw new Error('relq@ref is measured only with --ref <git-ref>');
  return cfg;
}
