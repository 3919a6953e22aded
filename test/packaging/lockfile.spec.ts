/**
 * The committed package-lock.json is what npm writes for package.json, so that `npm install` in
 * a fresh clone leaves the clone clean (and `npm ci` installs exactly it). npm recomputes the
 * lock from copies of both files in a temp dir (`--package-lock-only`: no node_modules, from
 * npm's cache or the registry, a few seconds).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
let dir: string | undefined;

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('npm install rewrites nothing of the committed package-lock.json', () => {
  dir = mkdtempSync(join(tmpdir(), 'relq-lock-'));
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(dir, f));
  const npm = spawnSync('npm', ['install', '--package-lock-only', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect({ status: npm.status, stderr: npm.stderr }).toEqual({ status: 0, stderr: '' });
  expect(readFileSync(join(dir, 'package-lock.json'), 'utf8')).toBe(readFileSync(join(root, 'package-lock.json'), 'utf8'));
}, 150_000);
