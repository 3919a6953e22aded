/**
 * The package as users get it: `npm pack` (which runs the prepack build), the tarball installed
 * into fresh apps outside the repository, a Nest app compiled against the package's own .d.ts
 * files and run with plain Node: as ESM and as CommonJS on Nest 12, and as CommonJS on Nest 11.
 * Each adds a job and reads its result from a private Redis.
 *
 * Installs come from the npm registry (or npm's cache), a few seconds each.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedTarball } from '../support/packed.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = join(root, 'test', 'packaging', 'fixtures', 'app');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

let redis: TestRedis;
let work: string;
let tarball: string;

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000): SpawnSyncReturns<string> {
  const res = spawnSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${res.status ?? res.signal}:\n${res.stdout}\n${res.stderr}`);
  }
  return res;
}

/** A fresh app folder with the tarball and `deps` installed; `type` is its package.json module type. */
function installApp(name: string, deps: string[]): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true }, null, 2));
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball, ...deps], dir);
  return dir;
}

/** The fixture app compiled into `<appDir>/<type>` as `type` (module or commonjs), once per app and type. */
function compiled(appDir: string, type: 'module' | 'commonjs'): string {
  const dir = join(appDir, type);
  if (existsSync(join(dir, 'build', 'main.js'))) return dir;
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }, null, 2));
  copyFileSync(join(fixture, 'main.ts'), join(dir, 'main.ts'));
  copyFileSync(join(fixture, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  run(process.execPath, [tsc, '-p', dir], dir);
  return dir;
}

/** Compiles the fixture app (see compiled) and runs it with `prefix`: what it printed last. */
function compileAndRun(appDir: string, type: 'module' | 'commonjs', prefix = uniquePrefix()): unknown {
  const dir = compiled(appDir, type);
  const out = run(process.execPath, [join(dir, 'build', 'main.js')], dir, { REDIS_URL: redis.url, RELQ_PREFIX: prefix }, 60_000);
  return JSON.parse(out.stdout.trim().split('\n').pop() ?? '');
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'relq-pack-'));
  redis = await startRedis();
  tarball = packedTarball();
}, 240_000);

afterAll(async () => {
  await redis?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the built engine, its Lua, every entry point, the dashboard page and no sources or maps', () => {
  const list = run('tar', ['-tzf', tarball], work).stdout.split('\n').filter(Boolean);
  for (const entry of ['index', 'nest/index', 'metrics/index', 'tracing/index', 'testing/index', 'dashboard/index', 'dashboard/nest/index', 'dashboard/bull-board/index', 'cli/main']) {
    expect(list).toContain(`package/dist/lib/${entry}.js`);
  }
  // the dashboard's page, served from next to its code
  for (const asset of ['index.html', 'app.js', 'style.css']) expect(list).toContain(`package/dist/lib/dashboard/public/${asset}`);
  expect(list).toContain('package/dist/lib/index.d.ts');
  expect(list).toContain('package/dist/lib/core/leases/lease.lua');
  expect(list.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  expect(list.filter((f) => f.endsWith('.map'))).toEqual([]);
});

describe('a Nest 12 app', () => {
  let app: string;
  beforeAll(() => {
    app = installApp('nest12', ['@nestjs/common@^12', '@nestjs/core@^12', 'reflect-metadata@^0.2', 'rxjs@^7']);
  }, 240_000);

  test('as ESM adds a job and gets its result', () => {
    expect(compileAndRun(app, 'module')).toEqual({ result: 42 });
  }, 120_000);

  test('as CommonJS (require of the ESM package) adds a job and gets its result', () => {
    expect(compileAndRun(app, 'commonjs')).toEqual({ result: 42 });
  }, 120_000);

  test('the installed relq bin lists the queue the app used and counts its job', () => {
    const prefix = uniquePrefix();
    compileAndRun(app, 'module', prefix);
    const bin = join(app, 'node_modules', '.bin', 'relq');
    const queues = JSON.parse(run(bin, ['queues', '--redis', redis.url, '--prefix', prefix, '--json'], app).stdout) as unknown;
    expect(JSON.stringify(queues)).toContain('"packed"');
    const counts = JSON.parse(run(bin, ['counts', 'packed', '--redis', redis.url, '--prefix', prefix, '--json'], app).stdout) as { completed: number };
    expect(counts.completed).toBe(1);
  }, 120_000);

  test('relq/testing loads from the package: createTestJob and the fake queue', () => {
    const script = [
      "import { createTestJob, createFakeQueue } from 'relq/testing';",
      "const job = createTestJob({ n: 2 });",
      "await job.updateProgress(50);",
      "const fake = createFakeQueue('packed');",
      "await fake.add({ n: 3 });",
      "console.log(JSON.stringify({ progress: job.progressUpdates, added: fake.added.length }));",
    ].join('\n');
    const out = run(process.execPath, ['--input-type=module', '-e', script], app).stdout;
    expect(JSON.parse(out.trim())).toEqual({ progress: [50], added: 1 });
  }, 60_000);
});

test('a Nest 11 app (CommonJS) adds a job and gets its result', () => {
  const app = installApp('nest11', ['@nestjs/common@^11', '@nestjs/core@^11', 'reflect-metadata@^0.2', 'rxjs@^7']);
  expect(compileAndRun(app, 'commonjs')).toEqual({ result: 42 });
}, 360_000);
