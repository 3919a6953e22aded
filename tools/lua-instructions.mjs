#!/usr/bin/env node
// Instructions Redis executes inside relq's scripts per job, counted by valgrind (callgrind,
// collecting inside `fcallCommand` only), for lib/ at a git ref against the working tree.
// Timings on a shared 2-core machine move by ±10 % between reps; these counts repeat to
// about 0.1 %, so a change of 1 % in the cost of the scripts shows. A development aid for
// the Lua hot path (apt-get install valgrind); `npm run bench` stays the measure of speed.
//
//   node tools/lua-instructions.mjs --ref <git-ref> [--jobs 2000] [--scenarios add1,addBulk,c1,c10,c50,batch]
//
// add1: add one by one; addBulk: addBulk of 1,000; cN: a Worker of concurrency N processing
// a backlog (one lease call also settles the jobs before it); batch: a BatchWorker (size 100,
// two batches at once, as in the bench) processing a backlog. Queue `keepCompletedMs: 0`, as
// in the bench. Each figure runs on its own redis-server under valgrind, started by the
// project's launcher (tools/redis-server.ts: free port, temp dir, watchdog), stopped
// before the next.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { libSources, transpileTree } from './transpile.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCENARIOS = ['add1', 'addBulk', 'c1', 'c10', 'c50', 'batch'];

const program = new Command('lua-instructions')
  .requiredOption('--ref <git-ref>', 'lib/ as committed at this ref, against the working tree')
  .option('--jobs <n>', 'jobs per figure', (v) => Number.parseInt(v, 10), 2000)
  .option('--scenarios <list>', `comma-separated, of ${SCENARIOS.join(', ')}`, SCENARIOS.join(','))
  .parse();
const opts = program.opts();
const scenarios = opts.scenarios.split(',');
for (const s of scenarios) if (!SCENARIOS.includes(s)) program.error(`unknown scenario ${s}`);
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('lua-instructions: needs valgrind (apt-get install valgrind)');
  process.exit(2);
}

const out = join(root, '.tmp', 'lua-instructions');
const scratch = mkdtempSync(join(tmpdir(), 'relq-lua-instructions-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

/** lib/ of `ref` ('' for the working tree), transpiled under .tmp/ (where node_modules is found). */
function build(name, ref) {
  const src = join(scratch, `${name}-src`);
  const dest = join(out, name);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  if (ref) {
    const res = spawnSync('sh', ['-c', `git archive '${ref}' lib | tar -x -C '${src}'`], { cwd: root, stdio: 'inherit' });
    if (res.status !== 0) process.exit(2);
  } else cpSync(join(root, 'lib'), join(src, 'lib'), { recursive: true });
  transpileTree(src, libSources(src), dest);
  return join(dest, 'lib', 'index.js');
}

const payload = { to: 'someone@example.com', subject: 'hello', body: 'x'.repeat(180) };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Instructions inside FCALL per job of one scenario, on a fresh server under callgrind. */
async function measure(lib, scenario, n) {
  const { Queue, Worker, BatchWorker } = await import(pathToFileURL(lib).href);
  const server = await startRedisServer({
    bin: 'valgrind',
    args: (port, dir) => ['--tool=callgrind', '--toggle-collect=fcallCommand', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, 'redis-server', ...plainArgs(port, dir)],
  });
  const file = join(server.dir, 'callgrind.out');
  const q = new Queue('lua-instructions', { connection: { host: server.host, port: server.port }, defaults: { keepCompletedMs: 0 } });
  const addBulk = async () => {
    for (let i = 0; i < n; i += 1000) await q.addBulk(Array.from({ length: Math.min(1000, n - i) }, () => ({ data: payload })));
  };
  const zero = () => spawnSync('callgrind_control', ['-z', String(server.pid)], { stdio: 'ignore' });
  await q.add(payload); // the function library is loaded before counting starts
  if (scenario === 'add1') {
    zero();
    for (let i = 0; i < n; i++) await q.add(payload);
  } else if (scenario === 'addBulk') {
    zero();
    await addBulk();
  } else {
    await addBulk();
    zero();
    let done = 0;
    let finish;
    const all = new Promise((r) => (finish = r));
    const w =
      scenario === 'batch'
        ? new BatchWorker(q, async () => undefined, { size: 100, concurrency: 2 })
        : new Worker(q, async () => undefined, { concurrency: Number(scenario.slice(1)) });
    const sub = w.events.subscribe((e) => {
      if (e.type === 'completed' && ++done === n + 1) finish();
    });
    await all;
    await w.close();
    sub.unsubscribe();
  }
  // callgrind writes its counts when the server exits by itself
  await q.client.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
  await q.close().catch(() => undefined);
  while (isAlive(server.pid)) await sleep(100);
  const total = Number(/^totals: (\d+)/m.exec(readFileSync(file, 'utf8'))[1]);
  await server.stop();
  return total / (scenario.startsWith('c') || scenario === 'batch' ? n + 1 : n); // a worker also processed the first job
}

const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const libs = { [`relq@${opts.ref}`]: build('ref', opts.ref), relq: build('tree', '') };
// the launcher, transpiled beside the working tree's build (whose lib/testing/ it imports)
transpileTree(root, [join(root, 'tools', 'redis-server.ts')], join(out, 'tree'), { lua: false });
const { startRedisServer } = await import(pathToFileURL(join(out, 'tree', 'tools', 'redis-server.js')).href);
const { plainArgs } = await import(pathToFileURL(join(out, 'tree', 'lib', 'testing', 'redis-process.js')).href);
console.log(`Instructions inside FCALL per job (callgrind), ${opts.jobs} jobs per figure\n`);
console.log(`| scenario | relq@${opts.ref} | relq (working tree) | change |`);
console.log('| --- | --- | --- | --- |');
for (const scenario of scenarios) {
  const [ref, tree] = [await measure(libs[`relq@${opts.ref}`], scenario, opts.jobs), await measure(libs.relq, scenario, opts.jobs)];
  const change = ((tree / ref - 1) * 100).toFixed(1);
  console.log(`| ${scenario} | ${Math.round(ref).toLocaleString('en')} | ${Math.round(tree).toLocaleString('en')} | ${change.startsWith('-') ? '−' + change.slice(1) : '+' + change} % |`);
}
