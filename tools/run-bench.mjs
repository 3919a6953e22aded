#!/usr/bin/env node
// `npm run bench [-- options]`: compiles bench/ (and the lib/ and tools/ files it imports)
// with tsc into .bench-tmp/, copies the Lua scripts next to them, and runs bench/main.ts there
// with --expose-gc (a watchdog kills that run if this launcher dies). `--profile` instead runs bench/profile.ts under `node --cpu-prof`.
// `--ref <git-ref>` benchmarks lib/ as committed at that ref (bench/ and tools/ stay the
// working tree's), so a run is reproducible while lib/ is being edited.
// Other options are passed through (see bench/main.ts): --quick, --n, --reps, --libs, ...
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { copyLua } from './copy-lua.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.bench-tmp');
const args = process.argv.slice(2);
const profile = args.includes('--profile');
const refAt = args.indexOf('--ref');
const ref = refAt >= 0 ? args[refAt + 1] : undefined;
const passArgs = args.filter((a, i) => a !== '--profile' && (refAt < 0 || (i !== refAt && i !== refAt + 1)));
if (refAt >= 0 && !ref) {
  console.error('run-bench: --ref needs a git ref');
  process.exit(2);
}

// 1. compile
rmSync(join(out, 'bench'), { recursive: true, force: true });
rmSync(join(out, 'lib'), { recursive: true, force: true });
rmSync(join(out, 'tools'), { recursive: true, force: true });
rmSync(join(out, 'bench.tsbuildinfo'), { force: true });
let srcRoot = root;
let refSha = '';
if (ref) {
  // lib/ from the ref; bench/, tools/, the Redis launcher (lib/testing/) and tsconfig.json
  // from the working tree, in .bench-tmp/src
  refSha = spawnSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).stdout.trim();
  if (!refSha) {
    console.error(`run-bench: unknown git ref ${ref}`);
    process.exit(2);
  }
  srcRoot = join(out, 'src');
  rmSync(srcRoot, { recursive: true, force: true });
  mkdirSync(srcRoot, { recursive: true });
  const archive = spawnSync('sh', ['-c', `git archive ${refSha} lib | tar -x -C '${srcRoot}'`], { cwd: root, stdio: 'inherit' });
  if (archive.status !== 0) process.exit(archive.status ?? 1);
  copyFileSync(join(root, 'tsconfig.json'), join(srcRoot, 'tsconfig.json'));
  const sources = (path) => statSync(path).isDirectory() || path.endsWith('.ts') || path.endsWith('tsconfig.json');
  for (const dir of ['bench', 'tools', 'lib/testing']) cpSync(join(root, dir), join(srcRoot, dir), { recursive: true, filter: sources });
  console.error(`run-bench: lib/ from ${ref} (${refSha})`);
}
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const t0 = Date.now();
const res = spawnSync(
  process.execPath,
  [tsc, '-p', join(srcRoot, 'bench', 'tsconfig.json'), '--outDir', out, '--tsBuildInfoFile', join(out, 'bench.tsbuildinfo')],
  { stdio: 'inherit', cwd: root },
);
const entry = join(out, 'bench', profile ? 'profile.js' : 'main.js');
if (res.status !== 0) {
  if (!existsSync(entry)) {
    console.error('run-bench: tsc failed and emitted nothing');
    process.exit(res.status ?? 1);
  }
  console.error('run-bench: tsc reported type errors (above); running the emitted JavaScript anyway');
}
console.error(`run-bench: compiled bench/ + lib/ to ${relative(root, out)}/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

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
  RELQ_BENCH_LIB: ref ? `${refSha}, lib/ as committed` : '',
  RELQ_BENCH_CMD: `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`,
};
const { startWatchdog } = await import(pathToFileURL(join(out, 'lib', 'testing', 'process-guard.js')).href);
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
