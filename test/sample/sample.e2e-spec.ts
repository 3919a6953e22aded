import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { killGroup, spawnGuarded, type GuardedProcess } from '../../tools/process-guard.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sample app over HTTP (in process)', () => {
  let redis: TestRedis;
  let app: INestApplication;

  beforeAll(async () => {
    redis = await startRedis();
    process.env.REDIS_URL = redis.url;
    process.env.RELQ_PREFIX = uniquePrefix();
    process.env.SAMPLE_FAILURE_RATE = '1'; // every first attempt fails: the retry must recover
    const { AppModule } = await import('../../sample/src/app.module.js');
    app = await NestFactory.create(AppModule, { logger: process.env.RELQ_TEST_LOGS ? ['error', 'warn', 'log'] : false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.REDIS_URL;
    delete process.env.RELQ_PREFIX;
    delete process.env.SAMPLE_FAILURE_RATE;
    await redis?.stop();
  });

  test('POST /emails enqueues; the job fails once, is retried and GET /emails/:id shows it completed', async () => {
    const server = app.getHttpServer();
    const { body } = await request(server)
      .post('/emails')
      .send({ to: 'ada@example.com', subject: 'Welcome', body: 'Hello Ada' })
      .expect(201);
    expect(body).toEqual({ id: expect.any(String) });

    const done = await until(
      async () => {
        const res = await request(server).get(`/emails/${body.id}`).expect(200);
        return res.body.status === 'completed' ? res.body : undefined;
      },
      10_000,
      'completed',
    );
    expect(done).toMatchObject({ id: body.id, status: 'completed', failures: 1, attempts: 2 });
    expect(done.result.messageId).toBe(`<${body.id}@sample.relq>`);
  });

  test('bad input is a 400, an unknown id a 404, and /health is ok', async () => {
    const server = app.getHttpServer();
    await request(server).post('/emails').send({ to: 'x' }).expect(400);
    await request(server).get('/emails/does-not-exist').expect(404);
    const health = await request(server).get('/health').expect(200);
    expect(health.body.status).toBe('ok');
    expect(health.body.info.queues.queues.emails.processors[0]).toMatchObject({ processor: 'EmailProcessor', alive: true });
  });
});

describe('npm run sample (tools/run-sample.mjs)', () => {
  // `npm run sample` leads its own process group under a watchdog (spawnGuarded); the app the
  // launcher starts leads another, and its Redis a third, each with the launcher's watchdog on it.
  const started: GuardedProcess[] = [];
  const outputs: string[] = [];

  afterAll(async () => {
    // Also after a failure or a timeout: SIGTERM lets the launcher stop the app and its Redis;
    // then whatever is left of its group and of the app's group is SIGKILLed.
    for (const p of started) await p.stop('SIGTERM', 10_000);
    for (const output of outputs) {
      const app = /main\.js \(pid (\d+)\)/.exec(output);
      if (app) killGroup(Number(app[1]), 'SIGKILL');
    }
  });

  /** Runs `npm run sample` (or `npm <args>`) with `env`; its output so far is `out()`. */
  function npmRunSample(env: NodeJS.ProcessEnv, args = ['run', 'sample']) {
    const full: NodeJS.ProcessEnv = { ...process.env, ...env };
    delete full.REDIS_URL;
    const launcher = spawnGuarded('npm', args, { cwd: root, env: full, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(launcher);
    const index = outputs.push('') - 1;
    const child = launcher.child;
    child.stdout!.on('data', (d: Buffer) => (outputs[index] += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (outputs[index] += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    return { child, exited, out: () => outputs[index] };
  }

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test('builds with tsc, starts its own redis-server when none answers, serves HTTP, and SIGTERM to npm stops all it started', async () => {
    const port = await freePort();
    const nothingThere = `redis://127.0.0.1:${await freePort()}`;
    const { child, exited, out } = npmRunSample({ PORT: String(port), SAMPLE_DEFAULT_REDIS_URL: nothingThere });

    await until(async () => (out().includes('sample listening') ? true : undefined), 120_000, `the sample to listen:\n${out()}`);
    await until(async () => (out().includes(`started: the sample listens on port ${port}`) ? true : undefined), 10_000, `the launcher to say so:\n${out()}`);
    expect(out()).toContain(`try: curl -s -XPOST localhost:${port}/emails`);
    expect(out()).toMatch(/no Redis answers at redis:\/\/127\.0\.0\.1:\d+/);
    const redisPid = Number(/started a private redis-server \(pid (\d+)\) on port \d+/.exec(out())?.[1]);
    const appPid = Number(/main\.js \(pid (\d+)\)/.exec(out())?.[1]);
    expect(alive(redisPid) && alive(appPid)).toBe(true);

    const base = `http://127.0.0.1:${port}`;
    const { body } = await request(base).post('/emails').send({ to: 'bob@example.com', subject: 'Hi', body: 'Yo' }).expect(201);
    await until(
      async () => ((await request(base).get(`/emails/${body.id}`)).body.status === 'completed' ? true : undefined),
      10_000,
      'completed',
    );
    expect((await request(base).get('/health').expect(200)).body.status).toBe('ok');
    // the dashboard the README points at
    expect((await request(base).get('/dashboard/').expect(200)).text).toContain('relq');
    const overview = await request(base).get('/dashboard/api/queues').expect(200);
    expect(JSON.stringify(overview.body)).toContain('emails');

    // npm passes the signal to the shell it runs the script in, not to the launcher.
    child.kill('SIGTERM');
    await exited;
    await until(async () => (!alive(appPid) && !alive(redisPid) ? true : undefined), 20_000, 'the app and its Redis to stop');
    expect(out()).toMatch(/SIGTERM: stopping the sample/);
  }, 150_000);

  test('a port already in use gives one clear line, no stack trace, and stops the Redis it started', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      const nothingThere = `redis://127.0.0.1:${await freePort()}`;
      const { exited, out } = npmRunSample({ PORT: String(port), SAMPLE_DEFAULT_REDIS_URL: nothingThere });
      expect(await exited).not.toBe(0);
      expect(out()).toContain(`port ${port} is already in use: stop what listens there, or choose another with PORT=<port> npm run sample`);
      expect(out()).not.toMatch(/^\s+at /m);
      expect(out()).not.toContain('EADDRINUSE');
      // nothing claims it started: the app never listened
      expect(out()).not.toMatch(/started[^\n]*main\.js|started: the sample|try: curl/);
      const redisPid = Number(/started a private redis-server \(pid (\d+)\)/.exec(out())?.[1]);
      await until(async () => (!alive(redisPid) ? true : undefined), 10_000, 'its Redis to stop');
    } finally {
      await new Promise((r) => busy.close(r));
    }
  }, 150_000);

  test('npm run example -- quickstart runs the README quick start on a Redis it starts, and stops that Redis', async () => {
    const nothingThere = `redis://127.0.0.1:${await freePort()}`;
    const { exited, out } = npmRunSample({ SAMPLE_DEFAULT_REDIS_URL: nothingThere }, ['run', 'example', '--', 'quickstart']);
    expect(await exited).toBe(0);
    expect(out()).toContain('sent to ada@example.com (attempt 1)');
    const redisPid = Number(/started a private redis-server \(pid (\d+)\)/.exec(out())?.[1]);
    await until(async () => (!alive(redisPid) ? true : undefined), 10_000, 'its Redis to stop');
  }, 150_000);
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}
