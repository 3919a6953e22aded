#!/usr/bin/env node
// `npm run test:nest11` (or `node tools/test-nest-major.mjs <major>`): runs the NestJS
// tests (NEST_SPECS below) against another NestJS major than the devDependencies' one.
// The first run installs that major's @nestjs packages (and the reflect-metadata and rxjs
// they load) from the npm registry into .tmp/nest-<major>/; Jest then maps every @nestjs/*
// and reflect-metadata import there (RELQ_NEST_DIR in jest.config.ts); the `npm run sample`
// child that test/sample starts still runs on the devDependencies' Nest. Extra arguments go
// to Jest.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [majorArg, ...jestArgs] = process.argv.slice(2);
const major = majorArg ?? '11';
if (!/^\d+$/.test(major)) {
  console.error(`test-nest-major: the first argument is a NestJS major version, got '${major}'`);
  process.exit(2);
}
const NAMES = ['common', 'core', 'terminus', 'testing', 'platform-express', 'platform-fastify'].map((p) => `@nestjs/${p}`);
// Every spec that starts a Nest app: the Nest glue, the sample, the dashboard's module, the
// metrics recipe and the testing kit's Nest tests.
// --forceExit: under Nest 11, Jest now and then does not exit after every test passed when
// test/nest/schedulers.spec.ts and another spec that starts a Nest app share the run, though
// no resource is left (process.getActiveResourcesInfo() is empty a few seconds later); Nest 12
// runs of the same specs always exit. Without it, `npm run test:nest11` could hang at the end.
const NEST_SPECS = ['test/nest', 'test/sample', 'test/dashboard/nest', 'test/observability/nest-metrics', 'test/testing/emails'];
const dir = join(root, '.tmp', `nest-${major}`);

function installedVersion(name) {
  const file = join(dir, 'node_modules', ...name.split('/'), 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined;
}

if (NAMES.some((name) => installedVersion(name)?.split('.')[0] !== major)) {
  const packages = NAMES.map((name) => `${name}@${major}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `relq-nest-${major}`, private: true }, null, 2));
  console.log(`test-nest-major: installing ${packages.join(' ')} into ${dir}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const install = spawnSync(npm, ['install', '--no-audit', '--no-fund', ...packages, 'reflect-metadata', 'rxjs'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const versions = NAMES.slice(0, 3).map((name) => `${name} ${installedVersion(name)}`);
console.log(`test-nest-major: testing against ${versions.join(', ')}`);

const jest = spawnSync(
  process.execPath,
  ['--experimental-vm-modules', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--runInBand', '--forceExit', ...NEST_SPECS, ...jestArgs],
  // ts-node (which reads jest.config.ts) would keep a compile cache in the system's temp dir
  { cwd: root, stdio: 'inherit', env: { ...process.env, RELQ_NEST_DIR: dir, DISABLE_V8_COMPILE_CACHE: '1' } },
);
process.exit(jest.status ?? 1);
