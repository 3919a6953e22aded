/**
 * RelqDashboardModule in a Nest app on Express and on Fastify against a real Redis: it shows
 * the queues the app registered, answers only under its path (the app's own routes still
 * work), its guard (from forRoot, or made by forRootAsync from an injected service) decides,
 * and the handler's own checks (headers, CSRF, the body limit) hold on either adapter.
 */
import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import { Controller, Get, Injectable, Module, type INestApplication, type LoggerService } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ValidationError } from '../../lib/index.js';
import { QueueModule, QueueRegistry } from '../../lib/nest/index.js';
import { RelqDashboardModule } from '../../lib/dashboard/nest/index.js';
import type { JobList, QueueOverview } from '../../lib/dashboard/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { act, raw } from './dashboard-server.js';

@Controller('hello')
class HelloController {
  @Get()
  hello(): { hello: string } {
    return { hello: 'world' };
  }
}

/** Stands for the app's own authentication. */
@Injectable()
class AuthService {
  isOperator(req: IncomingMessage): boolean {
    return req.headers.authorization === 'Bearer operator';
  }
}

@Module({ providers: [AuthService], exports: [AuthService] })
class AuthModule {}

let redis: TestRedis;
let app: INestApplication | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await app?.close();
  app = undefined;
});
afterAll(() => redis.stop());

/** Keeps what the app logs as warnings. */
class WarningLog implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

/** The HTTP adapters the dashboard mounts on, each made anew for an app. */
const ADAPTERS: Array<[string, () => AbstractHttpAdapter]> = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
];

async function boot(adapter: AbstractHttpAdapter, dashboard: ReturnType<typeof RelqDashboardModule.forRoot>, logger?: LoggerService): Promise<string> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      QueueModule.forRoot({ connection: redis.url, prefix: uniquePrefix() }),
      QueueModule.registerQueue({ name: 'emails' }, { name: 'reports' }),
      dashboard,
    ],
    controllers: [HelloController],
  }).compile();
  app = moduleRef.createNestApplication(adapter, { logger: logger ?? (process.env.RELQ_TEST_LOGS ? ['error', 'warn', 'log'] : false) });
  await app.listen(0, '127.0.0.1');
  return `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues/`;
}

describe.each(ADAPTERS)('on %s', (_name, newAdapter) => {
  test('forRoot: the registered queues under the path, the app routes untouched, actions through the guard', async () => {
    const url = await boot(newAdapter(), RelqDashboardModule.forRoot({ path: '/admin/queues', guard: (req, access) => access.kind === 'read' || req.headers['x-role'] === 'ops' }));
    const emails = app!.get(QueueRegistry).getQueue('emails');
    await emails.add({ to: 'ada@example.com' }, { jobId: 'welcome-ada' });

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>relq dashboard</title>');
    const overview = (await (await fetch(`${url}api/queues`)).json()) as { queues: QueueOverview[] };
    expect(overview.queues.map((q) => [q.name, q.counts?.pending])).toEqual([
      ['emails', 1],
      ['reports', 0],
    ]);
    const list = (await (await fetch(`${url}api/queues/emails/jobs?state=pending`)).json()) as JobList;
    expect(list.jobs.map((j) => j.id)).toEqual(['welcome-ada']);
    expect(await (await fetch(url.replace('/admin/queues/', '/hello'))).json()).toEqual({ hello: 'world' });
    expect((await fetch(url.replace('/admin/queues/', '/admin/other'))).status).toBe(404);

    expect((await act(`${url}api/queues/emails/pause`)).status).toBe(403);
    expect((await emails.counts()).paused).toBe(false);
    // on Express, Nest's JSON body parser has read the body before the dashboard, which takes
    // it as parsed; on Fastify, the middleware runs before any parser and reads it itself
    const removed = await act(`${url}api/queues/emails/jobs/welcome-ada/remove`, { force: false }, { 'x-relq-dashboard': '1', 'x-role': 'ops' });
    expect([removed.status, await removed.json()]).toEqual([200, { removed: true }]);
    expect(await emails.getJob('welcome-ada')).toBeNull();
  });

  test('forRootAsync: the guard comes from an injected service, and queues can be chosen', async () => {
    const url = await boot(
      newAdapter(),
      RelqDashboardModule.forRootAsync({
        imports: [AuthModule],
        inject: [AuthService],
        useFactory: (auth: AuthService) => ({ path: 'admin/queues/', queues: ['reports'], guard: (req: IncomingMessage) => auth.isOperator(req) }),
      }),
    );
    expect((await fetch(`${url}api/queues`)).status).toBe(403);
    const res = await fetch(`${url}api/queues`, { headers: { authorization: 'Bearer operator' } });
    expect(((await res.json()) as { queues: QueueOverview[] }).queues.map((q) => q.name)).toEqual(['reports']);
    const paused = await act(`${url}api/queues/reports/pause`, {}, { 'x-relq-dashboard': '1', authorization: 'Bearer operator' });
    expect(paused.status).toBe(200);
    expect((await app!.get(QueueRegistry).getQueue('reports').counts()).paused).toBe(true);
  });

  test('without a guard: the app log says who may use it, reads only from this machine, other hosts refused', async () => {
    const log = new WarningLog();
    const url = await boot(newAdapter(), RelqDashboardModule.forRoot({ path: '/admin/queues', allowedHosts: ['queues.example'] }), log);
    expect(log.warnings).toContainEqual(expect.stringMatching(/^relq dashboard at '\/admin\/queues': no guard, so it answers reads only to requests from this machine/));
    const overview = `${url}api/queues`;
    expect((await raw(overview)).status).toBe(200);
    expect((await raw(overview, { headers: { host: 'attacker.example' } })).status).toBe(403);
    // behind a proxy: a name for others, or a forwarded request, is not this machine
    expect((await raw(overview, { headers: { host: 'queues.example' } })).status).toBe(403);
    expect((await raw(overview, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
  });

  test('the options of createDashboard pass through: a guard with a challenge, allowed hosts', async () => {
    const challenge = 'Basic realm="relq dashboard"';
    const ops = `Basic ${Buffer.from('ops:s3cret').toString('base64')}`;
    const url = await boot(newAdapter(), RelqDashboardModule.forRoot({ path: '/admin/queues', guard: (req) => req.headers.authorization === ops, challenge, allowedHosts: ['.example.com'] }));
    const refused = await raw(url, { headers: { host: 'queues.example.com' } });
    expect([refused.status, refused.headers['www-authenticate']]).toEqual([401, challenge]);
    expect((await raw(url, { headers: { host: 'queues.example.com', 'x-forwarded-for': '203.0.113.9', authorization: ops } })).status).toBe(200);
    expect((await raw(url, { headers: { host: 'example.org', authorization: ops } })).status).toBe(403);
  });

  test("the handler's own checks: the redirect, security headers, methods, CSRF and Origin, the body limit", async () => {
    const url = await boot(newAdapter(), RelqDashboardModule.forRoot({ path: '/admin/queues', guard: () => true }));
    const emails = app!.get(QueueRegistry).getQueue('emails');
    const bare = await raw(`${url.slice(0, -1)}?q=1`);
    expect([bare.status, bare.headers.location]).toEqual([308, '/admin/queues/?q=1']);
    for (const res of [await raw(url), await raw(`${url}api/queues`), await raw(`${url}api/queues/nowhere/jobs`)]) {
      expect(res.headers).toMatchObject({
        'content-security-policy': expect.stringContaining("default-src 'none'"),
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
      });
    }
    expect((await raw(`${url}api/queues`, { method: 'DELETE' })).status).toBe(405);

    const pause = `${url}api/queues/emails/pause`;
    const post = (headers: Record<string, string>, body = '{}') => raw(pause, { method: 'POST', headers: { 'content-type': 'application/json', 'x-relq-dashboard': '1', ...headers }, body });
    expect((await raw(pause, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(403);
    expect((await post({ 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ origin: 'http://attacker.example' })).status).toBe(403);
    expect((await post({}, '{"force":')).status).toBe(400);
    // over 16 KiB, with its length told or chunked: refused, whether Express's parser read it or not
    for (const framing of [{}, { 'transfer-encoding': 'chunked' }] as Array<Record<string, string>>) {
      const tooBig = await post(framing, JSON.stringify({ pad: 'x'.repeat(20_000) }));
      expect([tooBig.status, JSON.parse(tooBig.body)]).toEqual([413, { error: 'action body over 16384 bytes' }]);
    }
    expect((await emails.counts()).paused).toBe(false);
    expect([(await post({ 'sec-fetch-site': 'same-origin' })).status, (await emails.counts()).paused]).toEqual([200, true]);
  });

  test('a missing or malformed path is a ValidationError naming it, before the app serves', async () => {
    for (const path of [undefined, '/admin queues', 42]) {
      const error = await boot(newAdapter(), RelqDashboardModule.forRoot({ path } as never)).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('path');
      await app?.close();
      app = undefined;
    }
  });

  test('an unknown option (a typo) is a ValidationError naming it, before the app serves', async () => {
    const error = await boot(newAdapter(), RelqDashboardModule.forRoot({ path: '/admin/queues', refreshMS: 1000 } as never)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('RelqDashboardModule options');
    expect((error as Error).message).toMatch(/unknown option 'refreshMS'/);
    await app?.close();
    app = undefined;
  });
});
