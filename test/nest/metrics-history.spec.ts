/**
 * A queue's metrics history in a Nest app: `registerQueue({ metrics })` is the engine option,
 * the app's processor writes the history, and a process outside the app reads it.
 */
import { Injectable, Module } from '@nestjs/common';
import { InjectQueue, Process, Processor, Queue, QueueModule, type Job } from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { startApp, waitFor } from './app-bed.js';

let redis: TestRedis;
const closing: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  while (closing.length) await closing.pop()!.close();
});
afterAll(() => redis.stop());

@Injectable()
class ReportsProducer {
  constructor(@InjectQueue('reports') readonly queue: Queue<{ n: number }>) {}
}

@Processor('reports')
class ReportsConsumer {
  @Process()
  async run(job: Job<{ n: number }>): Promise<number> {
    return job.data.n;
  }
}

test('registerQueue({ metrics }) keeps the history; the app processes, another Queue object reads it', async () => {
  const prefix = uniquePrefix();
  @Module({ imports: [QueueModule.registerQueue({ name: 'reports', metrics: { keepMinutes: 30 } })], providers: [ReportsProducer, ReportsConsumer] })
  class M {}
  const app = await startApp({ imports: [QueueModule.forRoot({ connection: redis.url, prefix }), M] });
  closing.push(app);
  const { queue } = app.get(ReportsProducer);
  await queue.addBulk([1, 2, 3].map((n) => ({ data: { n } })));
  const outside = new EngineQueue('reports', { connection: redis.url, prefix });
  closing.push(outside);
  const history = await waitFor(async () => {
    const h = await outside.getMetrics();
    return h.total.completed === 3 ? h : undefined;
  }, 10_000, 'three completions in the history');
  expect(history.keepMinutes).toBe(30);
  expect(history.total.runTime.count).toBe(3);

  // a bad value fails the app's start with the queue named
  const bad = await startApp({
    imports: [QueueModule.forRoot({ connection: redis.url, prefix }), QueueModule.registerQueue({ name: 'broken', metrics: { keepMinutes: 0 } })],
  }).catch((e: unknown) => e);
  if (!(bad instanceof Error)) closing.push(bad as { close(): Promise<void> });
  expect(bad).toBeInstanceOf(Error);
  expect(String((bad as Error).message)).toMatch(/broken[\s\S]*metrics\.keepMinutes/);
});
