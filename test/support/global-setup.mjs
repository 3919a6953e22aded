// Jest globalSetup: a temp dir the spec files of one run share for what is costly to make and
// the same for all of them (the packed tarball: test/support/packed.ts). Removed by
// global-teardown.mjs.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  process.env.RELQ_TEST_SHARED = mkdtempSync(join(tmpdir(), 'relq-test-shared-'));
}
