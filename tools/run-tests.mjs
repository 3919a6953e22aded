#!/usr/bin/env node
// `npm test`: type-checks, then runs the suite. With paths or Jest options it runs one Jest
// call with them, in band. Without, the whole suite runs on two Jest workers (each test file
// has its own private redis-servers, so files do not meet), then two suites alone, in band:
// - test/sandbox: its out-of-memory test makes a sandboxed child print V8's "heap out of
//   memory" on the stderr it inherits, which Jest's worker pool reads as its own worker's crash;
// - test/chaos: a minute of worker processes, SIGSTOP/SIGCONT, a Redis restart and client
//   kills, whose resume bounds (5 s) are measured, not the time of a suite running beside it
//   (one run of four beside other suites saw a worker lease again only after 15 s).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, DISABLE_V8_COMPILE_CACHE: '1' };

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const jest = (args) => run(process.execPath, ['--experimental-vm-modules', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...args]);

run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit']);
const args = process.argv.slice(2);
if (args.length > 0) {
  jest(['--runInBand', ...args]);
} else {
  const alone = ['test/sandbox/', 'test/chaos/'];
  jest(['--maxWorkers=2', '--testPathIgnorePatterns', '/node_modules/', '/dist/', ...alone.map((p) => `/${p}`)]);
  jest(['--runInBand', ...alone]);
}
