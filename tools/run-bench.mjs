#!/usr/bin/env node
// `npm run bench [-- options]`: compiles bench/ (and the lib/ and tools/ files it imports)
// with tsc into .bench-tmp/, copies the Lua scripts next to them, and runs bench/main.ts there
// with --expose-gc (a watchdog kills that run if this launcher dies). `--profile` instead runs bench/profile.ts under `node --cpu-prof`;
// `--sandbox` runs bench/sandbox-cost.ts (jobs/s of a handler file in threads and processes against in-process).
// `--partitions` runs bench/partition-share.ts (each master's Redis work per job of a hot queue, plain and partitioned, on a Cluster of 3).
// `--ref <git-ref>` also compiles relq's lib/ as committed at that ref (into .bench-tmp/ref/)
// and measures it as the library `relq@ref` beside the working tree's, alternating in the same
// run, so a change's cost is a same-run ratio. `--lib-at <git-ref>` measures lib/ as committed
// at that ref instead of the working tree's (bench/ and tools/ stay the working tree's).
// Other options are passed through (see bench/main.ts): --quick, --n, --reps, --libs, ...
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { copyLua } from './copy-lua.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.bench-tmp');
const args = process.argv.slice(2);
const profile = args.includes('--profile');
const sandbox = args.includes('--sandbox');
const partitions = args.includes('--partitions');
/** The value of `--<name> <value>`, and the arguments without it. */
function takeOption(list, name) {
  const at = list.indexOf(`--${name}`);
  if (at < 0) return [undefined, list];
  const value = list[at + 1];
  if (!value || value.startsWith('--')) {
    console.error(`run-bench: --${name} needs a git ref`);
    process.exit(2);
  }
  return [value, list.filter((_, i) => i !== at && i !== at + 1)];
}
const [libAt, rest] = takeOption(args, 'lib-at');
const [ref, passRest] = takeOption(rest, 'ref');
const passArgs = passRest.filter((a) => a !== '--profile' && a !== '--sandbox' && a !== '--partitions');
if ((profile || sandbox || partitions) && ref) {
  console.error(`run-bench: --${profile ? 'profile' : sandbox ? 'sandbox' : 'partitions'} measures one build; use --lib-at for another`);
  process.exit(2);
}

/** The short sha of `gitRef`, or exit. */
function shaOf(gitRef) {
  const sha = spawnSync('git', ['rev-parse', '--short', `${gitRef}^{commit}`], { cwd: root, encoding: 'utf8' }).stdout.trim();
  if (!sha) {
    console.error(`run-bench: unknown git ref ${gitRef}`);
    process.exit(2);
  }
  return sha;
}

/** lib/ as committed at `sha`, extracted under `dir` (emptied first). */
function extractLib(sha, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('sh', ['-c', `git archive ${sha} lib | tar -x -C '${dir}'`], { cwd: root, stdio: 'inherit' });
  if (archive.status !== 0) process.exit(archive.status ?? 1);
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
/** Runs tsc; type errors are reported, but the run goes on when `entry` was emitted. */
function compile(args, entry, what) {
  const res = spawnSync(process.execPath, [tsc, ...args], { stdio: 'inherit', cwd: root });
  if (res.status === 0) return;
  if (!existsSync(entry)) {
    console.error(`run-bench: tsc failed on ${what} and emitted nothing`);
    process.exit(res.status ?? 1);
  }
  console.error(`run-bench: tsc reported type errors in ${what} (above); running the emitted JavaScript anyway`);
}

// 1. compile
rmSync(join(out, 'bench'), { recursive: true, force: true });
rmSync(join(out, 'lib'), { recursive: true, force: true });
rmSync(join(out, 'tools'), { recursive: true, force: true });
rmSync(join(out, 'bench.tsbuildinfo'), { force: true });
let srcRoot = root;
let libAtSha = '';
if (libAt) {
  // lib/ from the ref; bench/, tools/, the Redis launcher (lib/testing/) and tsconfig.json
  // from the working tree, in .bench-tmp/src
  libAtSha = shaOf(libAt);
  srcRoot = join(out, 'src');
  extractLib(libAtSha, srcRoot);
  copyFileSync(join(root, 'tsconfig.json'), join(srcRoot, 'tsconfig.json'));
  const sources = (path) => statSync(path).isDirectory() || path.endsWith('.ts') || path.endsWith('tsconfig.json');
  for (const dir of ['bench', 'tools', 'lib/testing']) cpSync(join(root, dir), join(srcRoot, dir), { recursive: true, filter: sources });
  console.error(`run-bench: lib/ from ${libAt} (${libAtSha})`);
}
const t0 = Date.now();
const entry = join(out, 'bench', profile ? 'profile.js' : sandbox ? 'sandbox-cost.js' : partitions ? 'partition-share.js' : 'main.js');
compile(['-p', join(srcRoot, 'bench', 'tsconfig.json'), '--outDir', out, '--tsBuildInfoFile', join(out, 'bench.tsbuildinfo')], entry, 'bench/');
console.error(`run-bench: compiled bench/ + lib/ to ${relative(root, out)}/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

// The --ref build: the engine's entry point and what it imports, compiled on its own
// (.bench-tmp/ref-src -> .bench-tmp/ref), with its Lua beside it.
let refSha = '';
const refOut = join(out, 'ref');
if (ref) {
  refSha = shaOf(ref);
  const refSrc = join(out, 'ref-src');
  extractLib(refSha, refSrc);
  rmSync(refOut, { recursive: true, force: true });
  writeFileSync(
    join(refSrc, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { rootDir: '.', outDir: refOut, types: ['node'], declaration: false, sourceMap: false, noEmitOnError: false, paths: {} },
      files: ['lib/index.ts'],
      include: [],
    }),
  );
  compile(['-p', join(refSrc, 'tsconfig.json')], join(refOut, 'lib', 'index.js'), `lib/ at ${ref}`);
  copyLua(refSrc, refOut);
  console.error(`run-bench: relq@${refSha}: lib/ from ${ref}, compiled to ${relative(root, refOut)}/`);
}

// 2. Lua scripts next to the compiled lib
copyLua(srcRoot, out);

// 3. run
const nodeArgs = ['--expose-gc'];
const profDir = join(out, 'profile');
if (profile) {
  mkdirSync(profDir, { recursive: true });
  nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=100');
}
const env = {
  ...process.env,
  RELQ_BENCH_LIB: libAt ? `${libAtSha}, lib/ as committed` : '',
  RELQ_BENCH_REF_LIB: ref ? join(refOut, 'lib', 'index.js') : '',
  RELQ_BENCH_REF_SHA: refSha,
  RELQ_BENCH_CMD: `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`,
};
const { startWatchdog } = await import(pathToFileURL(join(out, 'lib', 'testing', 'watchdog.js')).href);
const child = spawn(process.execPath, [...nodeArgs, entry, ...passArgs], { stdio: 'inherit', cwd: root, env });
if (child.pid) startWatchdog({ pid: child.pid });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => child.kill(sig));
}
child.on('exit', (code, signal) => {
  if (profile && code === 0) {
    // summarise the newest profile
    const newest = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(profDir, f))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (newest) {
      const win = join(profDir, 'window.json');
      console.error(`run-bench: profile ${relative(root, newest)}`);
      spawnSync(process.execPath, [join(root, 'bench', 'analyze-profile.mjs'), newest, '30', ...(existsSync(win) ? [win] : [])], { stdio: 'inherit' });
    }
  }
  process.exit(code ?? (signal ? 1 : 0));
});
