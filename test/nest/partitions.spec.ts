/**
 * A partitioned queue in a Nest app (docs/scale-out.md): `registerQueue({ name, partitions })`
 * injects a PartitionedQueue; the app's @Processor leases from every partition, its sweeper
 * returns expired leases from every partition, its schedulers and listeners and the health
 * check cover the logical queue; the registry tells it from a plain queue.
 */
import { Injectable, Module } from '@nestjs/common';
import {
  InjectQueue,
  OnQueueEvent,
  PartitionedQueue,
  Process,
  Processor,
  QueueEventsListener,
  QueueHealthService,
  QueueModule,
  QueueRegistry,
  RelqConfigError,
  type Job,
  type QueueEvent,
} from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useApps, waitFor } from './app-bed.js';

const bed = useApps();

type Click = { user: string; n: number };

@Injectable()
class ClicksProducer {
  constructor(@InjectQueue('clicks') readonly queue: PartitionedQueue<Click>) {}
}

const seen: Array<{ id: string; user: string; n: number }> = [];
@Processor('clicks', { concurrency: 4 })
class ClicksConsumer {
  @Process()
  async run(job: Job<Click>): Promise<number> {
    seen.push({ id: job.id, ...job.data });
    return job.data.n;
  }
}

const events: QueueEvent[] = [];
@QueueEventsListener('clicks')
class ClicksListener {
  @OnQueueEvent('completed')
  completed(e: QueueEvent): void {
    events.push(e);
  }
}

test('registerQueue({ partitions }): injected, processed from every partition in each user order, listened to, in the health check', async () => {
  const prefix = uniquePrefix();
  @Module({
    imports: [
      QueueModule.registerQueue({
        name: 'clicks',
        partitions: 4,
        groupConcurrency: 1,
        schedulers: [{ id: 'nightly', spec: { cron: '0 3 * * *' }, template: { data: { user: 'cron', n: 0 } } }],
      }),
      QueueModule.registerQueue({ name: 'plain' }),
    ],
    providers: [ClicksProducer, ClicksConsumer, ClicksListener],
  })
  class M {}
  const app = await bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), M);
  const { queue } = app.get(ClicksProducer);
  expect(queue).toBeInstanceOf(PartitionedQueue);
  expect(queue.partitions).toBe(4);

  for (let n = 0; n < 10; n++) await queue.addBulk(['ann', 'bob', 'cy', 'dee', 'eve'].map((user) => ({ data: { user, n }, opts: { group: user } })));
  await waitFor(() => seen.length === 50, 15_000, '50 clicks processed');
  for (const user of ['ann', 'bob', 'cy', 'dee', 'eve']) {
    expect(seen.filter((s) => s.user === user).map((s) => s.n)).toEqual(Array.from({ length: 10 }, (_, n) => n));
  }
  // the users' groups spread over the partitions, and the one processor took from each of them
  const partitions = new Set(['ann', 'bob', 'cy', 'dee', 'eve'].map((user) => queue.partitionOf({ group: user })));
  expect(partitions.size).toBeGreaterThan(1);
  await waitFor(() => events.length === 50, 10_000, '50 completed events');

  // the declared scheduler: one queued job for the whole queue
  const schedulers = await queue.getSchedulers();
  expect(schedulers.map((s) => s.id)).toEqual(['nightly']);
  expect((await queue.counts()).delayed).toBe(1);

  // the registry tells a partitioned queue from a plain one
  const registry = app.get(QueueRegistry);
  expect(registry.getPartitionedQueue('clicks')).toBe(queue);
  expect(() => registry.getQueue('clicks')).toThrow(RelqConfigError);
  expect(() => registry.getQueue('clicks')).toThrow(/getPartitionedQueue\('clicks'\)/);
  expect(registry.getQueue('plain')).toBeInstanceOf(EngineQueue);
  expect(() => registry.getPartitionedQueue('plain')).toThrow(/not partitioned/);
  expect(registry.getProcessors().map((p) => p.queue)).toContain('clicks');
  // watchQueues reports both, so RelqMetrics and the dashboard follow the partitioned one too
  const watched: string[] = [];
  registry.watchQueues((change) => watched.push(`${change.type} ${change.queue.name}`))();
  expect(watched.sort()).toEqual(['added clicks', 'added plain']);

  // health: the logical queue's counts
  const health = await app.get(QueueHealthService).check();
  expect(health.queues['clicks']?.counts?.completed).toBe(50);
  // the sweeper runs on every partition
  expect((await registry.sweep('clicks')).stalled).toBe(0);
}, 30_000);

test('partitions with a queue-wide limit they cannot share are refused at startup, with the queue named', async () => {
  const bad = await bed
    .start(QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix() }), QueueModule.registerQueue({ name: 'wide', partitions: 3, bound: 100 }))
    .catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(Error);
  expect(String((bad as Error).message)).toMatch(/wide[\s\S]*bound[\s\S]*partitioned/);
});
