/**
 * The package as `npm pack` makes it (its prepack build included), made once per test run and
 * shared by the spec files that need it (test/packaging): into the run's shared temp dir
 * (test/support/global-setup.mjs), which the run's teardown removes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

/** The path of the packed tarball. */
export function packedTarball(): string {
  const shared = process.env.RELQ_TEST_SHARED;
  if (!shared) throw new Error('RELQ_TEST_SHARED is not set: run the tests through jest (jest.config.ts globalSetup)');
  const done = join(shared, 'pack');
  if (!existsSync(done)) {
    // packed aside, then moved into place: a pack cut short leaves nothing that looks done
    const partial = join(shared, `pack-${process.pid}-${Date.now()}`);
    mkdirSync(partial);
    const packed = spawnSync('npm', ['pack', '--pack-destination', partial, '--loglevel=error'], { cwd: root, encoding: 'utf8', timeout: 240_000, killSignal: 'SIGKILL' });
    if (packed.status !== 0) {
      rmSync(partial, { recursive: true, force: true });
      throw new Error(`npm pack exited ${packed.status ?? packed.signal}:\n${packed.stdout}\n${packed.stderr}`);
    }
    renameSync(partial, done);
  }
  const tarball = readdirSync(done).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${done}`);
  return join(done, tarball);
}
