/**
 * relq vs BullMQ vs bee-queue (and the raw-ioredis floors and redis-benchmark), and vs groupmq on
 * grouped work, in one run on one private redis-server. See bench/RESULTS.md for what is
 * measured and how.
 *
 *   npm run bench                 full run (N 20,000, 3 reps, backlogs 1k/100k/1M)
 *   npm run bench -- --quick      < 1 min smoke run (N 2,000, 1 rep, no 1M backlog)
 *   npm run bench -- --n 50000 --reps 5 --libs relq,bullmq --skip backlog,idle
 *
 * The runner: options (options.ts), the server, the scenarios (scenarios/, libraries
 * alternating from rep to rep), the recording (recorder.ts) and the files (output.ts).
 */
import { Redis } from 'ioredis';
import { isFloor, loadRefBuild, type Conn, type LibName } from './adapters.js';
import { childPids } from './children.js';
import { readOptions, type BenchConfig } from './options.js';
import { writeOutputs } from './output.js';
import { log, Recorder } from './recorder.js';
import { startRedis, type PrivateRedis } from './redis-server.js';
import { gc, type Scenario, type ScenarioContext } from './scenarios/kit.js';
import { SCENARIOS } from './scenarios/index.js';

function rotate<T>(xs: T[], k: number): T[] {
  const i = k % xs.length;
  return [...xs.slice(i), ...xs.slice(0, i)];
}

async function runScenarios(ctx: ScenarioContext): Promise<void> {
  const { cfg } = ctx;
  const allLibs = cfg.libs.filter((l) => l !== 'groupmq');
  const kinds: Record<Scenario['libs'], LibName[]> = {
    all: allLibs,
    queues: allLibs.filter((l) => !isFloor(l)),
    grouped: cfg.libs.filter((l) => l === 'relq' || l === 'groupmq'),
  };
  /** The scenario's libraries in rep `rep`'s order (each rep starts with the next library). */
  const libsFor = (s: Scenario, rep: number) => rotate(kinds[s.libs], rep);
  const run = async (s: Scenario, rep: number) => {
    if (!cfg.skip.has(s.name)) await s.run(ctx, libsFor(s, rep));
  };
  for (const s of SCENARIOS.filter((s) => s.when === 'before')) await run(s, 0);
  for (let rep = 0; rep < cfg.reps; rep++) {
    log(`== rep ${rep + 1}/${cfg.reps} (order ${rotate(cfg.libs, rep).join(', ')})`);
    for (const s of SCENARIOS.filter((s) => s.when === 'every rep' || (s.when === 'first rep' && rep === 0))) await run(s, rep);
  }
  for (const s of SCENARIOS.filter((s) => s.when === 'after')) await run(s, 0);
  await ctx.admin.flushall('SYNC');
}

async function benchmark(cfg: BenchConfig): Promise<void> {
  const started = new Date();
  const rec = new Recorder(cfg.quietBudgetMs);
  let redis: PrivateRedis | undefined;
  let admin: Redis | undefined;
  let ok = false;
  try {
    const refLabel = await loadRefBuild();
    if (refLabel) log(`measuring ${refLabel} beside the working tree's relq`);
    redis = await startRedis();
    const redisPid = redis.pid;
    rec.watchLoad(() => [redisPid, ...childPids()]);
    const conn: Conn = { host: redis.host, port: redis.port };
    admin = new Redis(conn);
    await admin.ping();
    const adm = admin;
    log(`private redis-server ${redis.version} on port ${redis.port}; N=${cfg.n}, reps=${cfg.reps}, libs=${cfg.libs.join(',')}`);
    const flush = async () => {
      await adm.flushall('SYNC');
      gc();
    };
    await runScenarios({ cfg, redis, conn, admin: adm, rec, flush });
    ok = true;
  } finally {
    rec.finish();
    await admin?.quit().catch(() => undefined);
    const version = redis?.version ?? 'unknown';
    await redis?.stop();
    if (ok) writeOutputs(cfg, rec.results, started, version);
  }
}

benchmark(readOptions()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
