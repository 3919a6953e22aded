/**
 * The tests docs/testing.md shows leave nothing open: run by a Jest of their own with
 * --detectOpenHandles, they pass and it reports no open handle, while the same run reports a
 * test that forgets a timer.
 */
import { join } from 'node:path';
import { spawnGuarded, type GuardedProcess } from '../../tools/process-guard.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS_TESTS = ['test/testing/email.processor.spec.ts', 'test/testing/emails.service.spec.ts', 'test/testing/emails.e2e-spec.ts'];
const runs: GuardedProcess[] = [];

afterAll(async () => {
  await Promise.all(runs.map((r) => r.stop('SIGKILL')));
});

/** Runs Jest on `files` with --detectOpenHandles in a child process; its exit code and output. */
async function jestDetectingOpenHandles(files: string[], extra: string[] = []): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0' };
  delete env.REDIS_URL; // the e2e test starts a private server, as on a machine without one
  const run = spawnGuarded(
    process.execPath,
    ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--runInBand', '--detectOpenHandles', '--ci', ...extra, ...files],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  runs.push(run);
  let output = '';
  run.child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  run.child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => run.child.once('exit', (c) => resolve(c)));
  return { code, output };
}

test('the docs tests pass and leave no open handle; a forgotten timer is reported', async () => {
  const [docs, leak] = await Promise.all([
    jestDetectingOpenHandles(DOCS_TESTS),
    jestDetectingOpenHandles(['test/testing/fixtures/forgotten-timer.leak.ts'], ['--testMatch', '**/*.leak.ts']),
  ]);

  expect(docs.output).toMatch(/Test Suites: 3 passed, 3 total/);
  expect(docs.output).not.toMatch(/open handle/i);
  expect(docs.code).toBe(0);

  expect(leak.output).toMatch(/Tests:\s+1 passed/);
  expect(leak.output).toMatch(/Jest has detected the following 1 open handle/);
}, 120_000);
