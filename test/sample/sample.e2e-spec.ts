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
  // The launcher leads its own process group under a watchdog (spawnGuarded); the app it
  // starts leads another, and its Redis a third, each with the launcher's watchdog on it.
  let launcher: GuardedProcess | undefined;
  let output = '';

  afterAll(async () => {
    // Also after a failure or a timeout: SIGTERM lets the launcher stop the app and its Redis;
    // then whatever is left of its group and of the app's group is SIGKILLed.
    await launcher?.stop('SIGTERM', 10_000);
    const app = /main\.js \(pid (\d+)\)/.exec(output);
    if (app) killGroup(Number(app[1]), 'SIGKILL');
  });

  test('builds with tsc, starts its own redis-server when none answers, serves HTTP and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const nothingThere = `redis://127.0.0.1:${await freePort()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), SAMPLE_DEFAULT_REDIS_URL: nothingThere };
    delete env.REDIS_URL;
    launcher = spawnGuarded(process.execPath, [join(root, 'tools', 'run-sample.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const child = launcher.child;
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

    await until(async () => (output.includes('sample listening') ? true : undefined), 120_000, `the sample to listen:\n${output}`);
    expect(output).toMatch(/no Redis answers at redis:\/\/127\.0\.0\.1:\d+/);
    expect(output).toMatch(/started a private redis-server \(pid \d+\) on port \d+/);

    const base = `http://127.0.0.1:${port}`;
    const { body } = await request(base).post('/emails').send({ to: 'bob@example.com', subject: 'Hi', body: 'Yo' }).expect(201);
    await until(
      async () => ((await request(base).get(`/emails/${body.id}`)).body.status === 'completed' ? true : undefined),
      10_000,
      'completed',
    );
    expect((await request(base).get('/health').expect(200)).body.status).toBe('ok');

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toMatch(/SIGTERM: stopping the sample/);
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
