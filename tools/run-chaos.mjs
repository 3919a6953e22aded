#!/usr/bin/env node
// `npm run chaos [-- --duration 60 --workers 3 --jobs 9000 --concurrency 4 --lease-ms 3000]`:
// transpiles the library and the chaos run (test/chaos, test/support, tools) into .tmp/, runs
// test/chaos/main.js there with progress on stdout, and removes the build afterwards. The exit
// code is the run's: 0 when the audit passed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { libSources, transpileTree, walk } from './transpile.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.tmp', `chaos-run-${randomBytes(4).toString('hex')}`);
const sources = [
  ...libSources(root),
  ...[join(root, 'test', 'chaos'), join(root, 'test', 'support'), join(root, 'tools')]
    .flatMap(walk)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.spec.ts')),
];
transpileTree(root, sources, out);
// test/support/engine-child.js imports ../../tools/transpile.mjs (which imports copy-lua.mjs)
mkdirSync(join(out, 'tools'), { recursive: true });
for (const f of ['transpile.mjs', 'copy-lua.mjs']) copyFileSync(join(root, 'tools', f), join(out, 'tools', f));

const child = spawn(process.execPath, [join(out, 'test', 'chaos', 'main.js'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
const forward = (signal) => child.kill(signal);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
child.on('exit', (code, signal) => {
  rmSync(out, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
