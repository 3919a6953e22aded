#!/usr/bin/env node
// `npm run sample`: builds the NestJS sample app (sample/) with tsc and runs it.
// `npm run example -- <name>`: the same build (it includes examples/), runs examples/<name>.ts.
//
// Redis: REDIS_URL if set (it must answer), else 127.0.0.1:6379; when nothing answers
// there, a private `redis-server` (from PATH or REDIS_SERVER_BIN) is started on a free
// port for as long as the sample runs (tools/redis-server.ts, compiled with the sample), or
// else a redis:7 container through Testcontainers when Docker is available. If none of that
// is possible it says what to install.
//
// The build compiles sample/src together with lib/ into .tmp/sample (tsc, because Nest
// needs emitDecoratorMetadata) and writes .tmp/sample/package.json so that the sample's
// `import ... from 'relq/nest'` resolves to the freshly compiled library.
//
// The app runs in its own process group; a watchdog kills that group if this launcher dies
// without stopping it (even SIGKILL), as one does for the private Redis.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { copyLua } from './copy-lua.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, '.tmp', 'sample');
// Where to look when REDIS_URL is not set (overridable for the launcher's own e2e test).
const DEFAULT_URL = process.env.SAMPLE_DEFAULT_REDIS_URL || 'redis://127.0.0.1:6379';

// `--example <name>`: run examples/<name>.ts instead of the sample app.
const exampleAt = process.argv.indexOf('--example');
const example = exampleAt === -1 ? undefined : process.argv[exampleAt + 1];

const say = (msg) => console.log(`[run-sample] ${msg}`);
const fail = (msg) => {
  console.error(`[run-sample] ${msg}`);
  process.exit(1);
};

// ---- build --------------------------------------------------------------------------

function build() {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc) || !existsSync(join(root, 'node_modules', '@nestjs', 'core'))) {
    fail('dependencies are missing: run `npm install` first.');
  }
  say('building the sample with tsc (sample/tsconfig.json -> .tmp/sample) ...');
  const t0 = Date.now();
  const res = spawnSync(process.execPath, [tsc, '-p', join(root, 'sample', 'tsconfig.json')], { stdio: 'inherit', cwd: root });
  if (res.status !== 0) fail('tsc failed (see above).');
  // The engine reads its Lua scripts next to its compiled code.
  copyLua(root, outDir);
  // Handler files of the examples (plain modules a sandboxed worker loads) go next to them.
  for (const f of readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.mjs'))) {
    copyFileSync(join(root, 'examples', f), join(outDir, 'examples', f));
  }
  // The package's own entry points, pointed at this build instead of dist/.
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entries = Object.fromEntries(
    Object.entries(exports)
      .filter(([, target]) => typeof target === 'object')
      .map(([entry, target]) => [entry, target.default.replace('./dist/', './')]),
  );
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ name: 'relq', private: true, type: 'module', exports: entries }, null, 2) + '\n');
  say(`built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// ---- redis --------------------------------------------------------------------------

/** The Redis launcher (tools/redis-server.ts) and what it builds on (lib/testing/), as compiled by build(). */
const compiled = (...path) => import(pathToFileURL(join(outDir, ...path)).href);
const testing = (file) => compiled('lib', 'testing', file);
const guard = () => testing('watchdog.js');

/** Resolves true when a Redis server answers PING at `url` within `ms`. */
async function pings(url, ms = 1000) {
  const u = new URL(url);
  // TLS (a rediss:// URL, or TLS material for a redis:// one): trust it, the app reports problems itself
  if (u.protocol === 'rediss:' || process.env.REDIS_TLS_CA || process.env.REDIS_TLS_CERT) return true;
  const { pingOnce } = await testing('redis-ping.js');
  const auth = {
    user: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
  };
  return pingOnce(u.hostname || '127.0.0.1', Number(u.port || 6379), auth, ms).then(
    (reply) => reply.includes('+PONG'),
    () => false,
  );
}

/** Starts a private redis-server (own process group: Ctrl+C must not stop Redis while the app drains its jobs). */
async function spawnRedis() {
  const { redisServerBinary } = await testing('redis-binary.js');
  const { startRedisServer } = await compiled('tools', 'redis-server.js');
  if (!redisServerBinary()) return undefined;
  try {
    const server = await startRedisServer({ dirPrefix: 'relq-sample-redis-' });
    return {
      url: `redis://${server.host}:${server.port}`,
      stop: () => server.stop(),
      what: `a private redis-server (pid ${server.pid}) on port ${server.port}`,
    };
  } catch (err) {
    say(`could not start redis-server: ${err.message}`);
    return undefined;
  }
}

async function tryContainer() {
  try {
    const tc = await import('testcontainers');
    await tc.getContainerRuntimeClient();
    const container = await new tc.GenericContainer('redis:7')
      .withCommand(['redis-server', '--save', '', '--appendonly', 'no'])
      .withExposedPorts(6379)
      .withWaitStrategy(tc.Wait.forLogMessage('Ready to accept connections'))
      .start();
    const url = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
    return { url, stop: () => container.stop().then(() => undefined), what: `a redis:7 container (${url})` };
  } catch {
    return undefined;
  }
}

async function getRedis() {
  if (process.env.REDIS_URL) {
    const shown = process.env.REDIS_URL.replace(/\/\/[^@/]*@/, '//***@');
    if (!(await pings(process.env.REDIS_URL, 3000))) {
      fail(`REDIS_URL is set to ${shown} but no Redis answers there. Start it, or unset REDIS_URL to let the sample start its own.`);
    }
    say(`using Redis at ${shown} (REDIS_URL)`);
    return { url: process.env.REDIS_URL, stop: async () => undefined };
  }
  if (await pings(DEFAULT_URL)) {
    say(`using the Redis that answers at ${DEFAULT_URL}`);
    return { url: DEFAULT_URL, stop: async () => undefined };
  }
  say(`no Redis answers at ${DEFAULT_URL}`);
  const started = (await spawnRedis()) || (await tryContainer());
  if (!started) {
    fail(
      'no Redis is available and none could be started. Do one of:\n' +
        '  - install Redis (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) and run `npm run sample` again;\n' +
        '  - start one with Docker: docker run --rm -p 6379:6379 redis:7;\n' +
        '  - point REDIS_URL at a Redis >= 7 server: REDIS_URL=redis://host:6379 npm run sample',
    );
  }
  say(`started ${started.what} for this run; it is stopped when the sample exits`);
  return started;
}

// ---- run ----------------------------------------------------------------------------

if (exampleAt !== -1) {
  const names = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
  if (!names.includes(example)) fail(`usage: npm run example -- <name>, one of: ${names.join(', ')}`);
}
build();
const redis = await getRedis();
const { isRunning, killGroup, startWatchdog, stopWatchdog } = await guard();
const port = process.env.PORT || '3000';
const main = example ? join(outDir, 'examples', `${example}.js`) : join(outDir, 'sample', 'src', 'main.js');
// Own process group, so that a terminal's Ctrl+C reaches the app once (forwarded below),
// not twice: a second signal would end Nest's graceful shutdown early.
// The IPC channel: the sample says when it listens (sample/src/main.ts).
const app = spawn(process.execPath, ['--enable-source-maps', main], {
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  detached: true,
  env: { ...process.env, REDIS_URL: redis.url, ...(example ? {} : { PORT: port }) }, // examples keep their own default port
});
if (example) {
  say(`started ${relative(root, main)} (pid ${app.pid}) (Ctrl+C stops it)`);
} else {
  // "started" only once it listens: a busy port ends it before, with its own one-line error.
  say(`starting ${relative(root, main)} (pid ${app.pid}) ...`);
  app.once('message', () => {
    say(`started: the sample listens on port ${port} (Ctrl+C stops it)`);
    say(`try: curl -s -XPOST localhost:${port}/emails -H 'content-type: application/json' -d '{"to":"ada@example.com","subject":"Hi","body":"Hello"}'`);
  });
}
const appWatchdog = app.pid ? startWatchdog({ pid: app.pid, group: true }) : undefined;
process.on('exit', () => {
  if (app.pid && isRunning(app)) killGroup(app.pid, 'SIGKILL');
});

let stopping = false;
const forward = (signal) => {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping the sample (running emails get up to 5 s to finish) ...`);
  app.kill(signal); // enableShutdownHooks: drain, give unfinished jobs back, close
};
process.on('SIGINT', () => forward('SIGINT'));
process.on('SIGTERM', () => forward('SIGTERM'));
// `npm run sample` starts this file through `sh -c`, and npm passes a SIGTERM only to that
// shell, which exits without passing it on: a launcher whose parent is gone stops the sample.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && forward('SIGTERM'), 250).unref();

const code = await new Promise((r) => app.once('exit', (c, s) => r(c ?? (s ? 0 : 1))));
stopWatchdog(appWatchdog);
await redis.stop();
process.exit(code);
