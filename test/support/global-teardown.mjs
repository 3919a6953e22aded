// Jest globalTeardown: removes the run's shared temp dir (global-setup.mjs).
import { rmSync } from 'node:fs';

export default function globalTeardown() {
  const dir = process.env.RELQ_TEST_SHARED;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
