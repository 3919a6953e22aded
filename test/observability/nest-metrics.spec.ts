/**
 * The Nest recipe of docs/observability.md (nest-metrics.recipe.ts, kept identical to the
 * docs): GET /metrics over HTTP serves relq's metrics of a Nest app's queues and processors.
 */
import { readFileSync } from 'node:fs';
import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { Process, Processor, QueueModule, QueueRegistry, type Job } from '../../lib/nest/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';
import { parseExposition } from './exposition.js';
import { MetricsModule } from './nest-metrics.recipe.js';

let redis: TestRedis;
let app: INestApplication | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await app?.close();
  await redis?.stop();
});

@Processor('emails')
class EmailProcessor {
  @Process()
  send(job: Job<string>): string {
    if (job.data === 'bounce') throw new Error('mailbox full');
    return `sent to ${job.data}`;
  }
}

test('GET /metrics serves the counters of the processors and the gauges of every registered queue', async () => {
  @Module({
    imports: [
      QueueModule.forRoot({ connection: redis.url, prefix: uniquePrefix(), defaults: { processor: { blockMs: 300 } } }),
      QueueModule.registerQueue({ name: 'emails', defaults: { job: { attempts: 1 } } }),
      QueueModule.registerQueue({ name: 'reports' }),
      MetricsModule,
    ],
    providers: [EmailProcessor],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();

  const emails = app.get(QueueRegistry).getQueue<string, string>('emails');
  await emails.addBulk([{ data: 'ada@example.com' }, { data: 'bounce' }]);
  await app.get(QueueRegistry).getQueue('reports').add({ month: 11 });
  await waitUntil(async () => {
    const c = await emails.counts();
    return c.completed === 1 && c.dead === 1;
  }, 'the emails to be sent or dead');

  const res = await request(app.getHttpServer()).get('/metrics').expect(200);
  // Prometheus's text format 0.0.4 (Express 4, under Nest 11, adds a charset parameter)
  expect(res.headers['content-type']).toMatch(/^text\/plain;(?: charset=utf-8;)? version=0\.0\.4/);
  const x = parseExposition(res.text);
  expect(x.value('relq_jobs_added_total', { queue: 'emails' })).toBe(2);
  expect(x.value('relq_jobs_completed_total', { queue: 'emails' })).toBe(1);
  expect(x.value('relq_jobs_dead_lettered_total', { queue: 'emails' })).toBe(1);
  expect(x.value('relq_queue_jobs', { queue: 'emails', state: 'completed' })).toBe(1);
  expect(x.value('relq_queue_jobs', { queue: 'emails', state: 'dead' })).toBe(1);
  expect(x.value('relq_queue_jobs', { queue: 'reports', state: 'pending' })).toBe(1);
});

test('docs/observability.md shows the recipe as it is tested', () => {
  const docs = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
  const block = /<!-- file: test\/observability\/nest-metrics\.recipe\.ts -->\n```ts\n([\s\S]*?)```/.exec(docs);
  expect(block?.[1]).toBe(readFileSync(new URL('./nest-metrics.recipe.ts', import.meta.url), 'utf8'));
});
