/**
 * The sample app over TLS with client certificates required, as the README's least-privilege
 * ACL user: its connection comes from REDIS_URL and REDIS_TLS_* files (sample/src/
 * redis-connection.ts), once with a rediss:// URL and once with a redis:// URL plus the TLS
 * options. A wrong password: the app reports it, and neither its logs nor its health output
 * hold the password.
 */
import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import request from 'supertest';
import { README_ACL_PASSWORD, readmeAclLine, runAclLine } from '../support/acl.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { makeTestCerts, type TestCerts } from '../support/tls.js';
import { waitForValue } from '../support/wait.js';

let certs: TestCerts;
let redis: TestRedis;
const ENV_KEYS = ['REDIS_URL', 'RELQ_PREFIX', 'SAMPLE_FAILURE_RATE', 'REDIS_TLS_CA', 'REDIS_TLS_CERT', 'REDIS_TLS_KEY'];

/** Every line the app logged. */
class Recorder implements LoggerService {
  readonly lines: string[] = [];
  log(m: unknown, ...rest: unknown[]) {
    this.lines.push([m, ...rest].map(String).join(' '));
  }
  error = this.log;
  warn = this.log;
  debug = this.log;
  verbose = this.log;
}

beforeAll(async () => {
  certs = await makeTestCerts();
  redis = await startRedis({ tls: { certs } });
  const admin = new Redis({ host: redis.host, port: redis.port, tls: certs.clientTls() });
  try {
    await runAclLine(admin, readmeAclLine());
  } finally {
    admin.disconnect();
  }
});
afterEach(() => {
  for (const k of ENV_KEYS) delete process.env[k];
});
afterAll(async () => {
  await redis?.stop();
  certs?.remove();
});

async function startSample(url: string, logger: LoggerService | false = false): Promise<INestApplication> {
  process.env.REDIS_URL = url;
  process.env.RELQ_PREFIX = 'myapp'; // the ACL user's prefix
  process.env.REDIS_TLS_CA = certs.caFile;
  process.env.REDIS_TLS_CERT = certs.client.cert;
  process.env.REDIS_TLS_KEY = certs.client.key;
  const { AppModule } = await import('../../sample/src/app.module.js');
  const app = await NestFactory.create(AppModule, { logger });
  await app.init();
  return app;
}

async function emailRoundTrip(app: INestApplication): Promise<void> {
  const server = app.getHttpServer();
  const { body } = await request(server).post('/emails').send({ to: 'ada@example.com', subject: 'Hi', body: 'Over TLS' }).expect(201);
  const done = await waitForValue(async () => {
    const res = await request(server).get(`/emails/${body.id}`).expect(200);
    return res.body.status === 'completed' ? res.body : undefined;
  }, 'the email to complete', 15_000);
  expect(done.result.messageId).toBe(`<${body.id}@sample.relq>`);
  const health = await request(server).get('/health').expect(200);
  expect(health.body.status).toBe('ok');
}

const user = `relq-app:${README_ACL_PASSWORD}`;

test('rediss:// URL with the ACL user and TLS files: POST /emails completes, /health is ok', async () => {
  const app = await startSample(`rediss://${user}@${redis.host}:${redis.port}`);
  try {
    await emailRoundTrip(app);
  } finally {
    await app.close();
  }
});

test('redis:// URL with TLS options from the files: the same', async () => {
  const app = await startSample(`redis://${user}@${redis.host}:${redis.port}`);
  try {
    await emailRoundTrip(app);
  } finally {
    await app.close();
  }
});

test('a wrong password: /health and POST report it; no log line or response holds the password', async () => {
  const logs = new Recorder();
  const secret = 'wrong-secret-8c1f';
  const app = await startSample(`rediss://relq-app:${secret}@${redis.host}:${redis.port}`, logs);
  try {
    const server = app.getHttpServer();
    const post = await request(server).post('/emails').send({ to: 'x@example.com', subject: 's', body: 'b' });
    expect(post.status).toBe(500);
    const health = await request(server).get('/health');
    expect(health.status).toBe(503);
    expect(JSON.stringify(health.body)).toMatch(/refused the credentials|WRONGPASS/);
    // the lease loop reports its failure too
    await waitForValue(async () => (logs.lines.some((l) => /WRONGPASS|refused the credentials/.test(l)) ? true : undefined), 'a logged refusal', 15_000);
    const everything = [JSON.stringify(post.body), JSON.stringify(health.body), ...logs.lines].join('\n');
    expect(everything).not.toContain(secret);
  } finally {
    await app.close();
  }
});
