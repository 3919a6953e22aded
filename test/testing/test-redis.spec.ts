/**
 * startTestRedis(): a private redis-server that a real Queue and Worker use, gone with its temp
 * dir after stop(), and also when the process that started it dies by SIGKILL (the watchdog);
 * REDIS_URL when set; one clear line when there is no redis-server to start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { Queue, ValidationError, Worker } from 'relq';
import { RedisServerNotFoundError, startTestRedis, type TestRedis } from 'relq/testing';
import { transpileTree } from '../../tools/transpile.mjs';
import { waitForValue, waitUntil } from '../support/wait.js';

/** The server's pid and data dir, as it reports them. */
async function serverFacts(port: number): Promise<{ pid: number; dir: string }> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const info = await client.info('server');
    const [, dir] = (await client.config('GET', 'dir')) as [string, string];
    return { pid: Number(/process_id:(\d+)/.exec(info)![1]), dir };
  } finally {
    client.disconnect();
  }
}

/** `entry` and the files it imports by relative path, transitively. */
function importClosure(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) visit(resolve(dirname(file), `${m[1]}.ts`));
  };
  visit(entry);
  return [...seen];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs `body` with environment variables set (undefined: unset), then restores them. */
async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, value] of Object.entries(v)) {
      if (value === undefined) delete process.env[k];
      else process.env[k] = value;
    }
  };
  apply(vars);
  try {
    return await body();
  } finally {
    apply(saved);
  }
}

const servers: TestRedis[] = [];
/** The child's copy of startTestRedis and what it imports, transpiled (Node 20 cannot load TypeScript). */
let built: string | undefined;
let owner: ChildProcess | undefined;
/** A server the owner child started: killed here if the watchdog failed to. */
let orphan: { pid: number; dir: string } | undefined;

afterAll(async () => {
  for (const s of servers) await s.stop();
  owner?.kill('SIGKILL');
  if (orphan && isAlive(orphan.pid)) process.kill(orphan.pid, 'SIGKILL');
  if (orphan) rmSync(orphan.dir, { recursive: true, force: true });
  if (built) rmSync(built, { recursive: true, force: true });
});

test('a real Queue and Worker run on it; stop() ends the server and removes its dir', async () => {
  const redis = await withEnv({ REDIS_URL: undefined }, () => startTestRedis());
  servers.push(redis);
  expect(redis).toMatchObject({ url: `redis://127.0.0.1:${redis.port}`, host: '127.0.0.1', source: 'spawned' });
  const facts = await serverFacts(redis.port);
  expect(existsSync(facts.dir)).toBe(true);

  const queue = new Queue<{ n: number }, number>('squares', { connection: redis.url });
  const worker = new Worker(queue, async (job) => job.data.n ** 2, { blockMs: 200 });
  try {
    const { id } = await queue.add({ n: 7 });
    await expect(queue.waitForResult(id, { timeoutMs: 10_000 })).resolves.toBe(49);
  } finally {
    await worker.close();
    await queue.close();
  }

  await redis.stop();
  await redis.stop(); // idempotent
  expect(isAlive(facts.pid)).toBe(false);
  expect(existsSync(facts.dir)).toBe(false);
});

test('args reach redis-server', async () => {
  const redis = await startTestRedis({ args: ['--maxmemory', '10mb'] });
  servers.push(redis);
  const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  try {
    expect(await client.config('GET', 'maxmemory')).toEqual(['maxmemory', String(10 * 1024 * 1024)]);
  } finally {
    client.disconnect();
  }
  await expect(startTestRedis({ args: '--save' as unknown as string[] })).rejects.toThrow(ValidationError);
  await expect(startTestRedis({ args: ['--x'], useRedisUrl: true })).rejects.toThrow(/give args or useRedisUrl, not both/);
});

test('REDIS_URL, when set, is used as it is (stop() leaves it alone) unless useRedisUrl is false', async () => {
  await withEnv({ REDIS_URL: 'redis://10.1.2.3:6390/2' }, async () => {
    const shared = await startTestRedis();
    expect(shared).toMatchObject({ url: 'redis://10.1.2.3:6390/2', host: '10.1.2.3', port: 6390, source: 'env' });
    await shared.stop();
    const own = await startTestRedis({ useRedisUrl: false });
    servers.push(own);
    expect(own.source).toBe('spawned');
    expect(own.host).toBe('127.0.0.1');
  });
});

test('a REDIS_URL that does not parse: a ValidationError without its password (message, stack, JSON, inspect)', async () => {
  const secret = 'S3cret-in-env';
  const err = await withEnv({ REDIS_URL: `redis://user:${secret}@[not-a-host` }, () => startTestRedis().then(() => undefined, (e: unknown) => e));
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as Error).message).toBe("REDIS_URL: is not a valid URL: '[not-a-host'");
  for (const shown of [(err as Error).message, (err as Error).stack, JSON.stringify(err), inspect(err, { depth: 10, showHidden: true })]) {
    expect(shown).not.toContain(secret);
  }
});

test('without a redis-server binary: one line that says how to install it or set REDIS_URL', async () => {
  const err = await withEnv({ REDIS_URL: undefined, REDIS_SERVER_BIN: '/nonexistent/redis-server' }, () => startTestRedis().then(() => undefined, (e: unknown) => e));
  expect(err).toBeInstanceOf(RedisServerNotFoundError);
  const message = (err as Error).message;
  expect(message).not.toContain('\n');
  expect(message).toMatch(/REDIS_SERVER_BIN=\/nonexistent\/redis-server is not an executable file/);
  expect(message).toMatch(/apt-get install -y redis-server/);
  expect(message).toMatch(/brew install redis/);
  expect(message).toMatch(/set REDIS_URL/);
});

test('a server outlives no owner: SIGKILL of the process that started it takes the server and its dir', async () => {
  const root = process.cwd();
  built = join(root, '.tmp', `testing-kit-${randomBytes(4).toString('hex')}`);
  transpileTree(root, importClosure(join(root, 'lib', 'testing', 'test-redis.ts')), built, { lua: false });
  const script = [
    `const { startTestRedis } = await import(${JSON.stringify(join(built, 'lib', 'testing', 'test-redis.js'))});`,
    'const r = await startTestRedis();',
    "process.stdout.write(JSON.stringify({ port: r.port }) + '\\n');",
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const env = { ...process.env };
  delete env.REDIS_URL;
  owner = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  owner.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const { port } = await waitForValue(async () => (out.includes('\n') ? (JSON.parse(out) as { port: number }) : undefined), 'the child to start its server', 15_000, 25);
  orphan = await serverFacts(port);
  expect(isAlive(orphan.pid)).toBe(true);

  owner.kill('SIGKILL');
  await waitUntil(() => !isAlive(orphan!.pid) && !existsSync(orphan!.dir), 'the watchdog to kill the server and remove its dir', 10_000, 50);
});
