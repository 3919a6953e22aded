/**
 * QueueRegistry.sweep runs through the queue's sweeper, so the sweeper's status (what the
 * health check reads) sees a sweep asked for outside the schedule.
 */
import { Module } from '@nestjs/common';
import { QueueModule, QueueRegistry } from '../../lib/nest/index.js';
import { ValidationError } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useApps } from './app-bed.js';

const bed = useApps();

test('a sweep asked for through the registry shows in the sweeper status', async () => {
  @Module({ imports: [QueueModule.registerQueue({ name: 'swept' })] })
  class M {}
  const app = await bed.start(
    QueueModule.forRoot({ connection: bed.redis.url, prefix: uniquePrefix(), sweeper: { intervalMs: 3_600_000 }, workers: { enabled: false } }),
    M,
  );
  const registry = app.get(QueueRegistry);
  const queue = registry.getQueue<number>('swept');
  const status = () => registry.getSweepers().find((s) => s.queue === 'swept')!;
  // The scheduled first sweep comes within a second of start; once it has run, the next is an
  // hour away, so only the sweep asked for below can promote the job.
  for (const until = Date.now() + 10_000; status().lastRunAt === null && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const before = status().lastRunAt;
  expect(before).not.toBeNull();
  await queue.add(1, { delayMs: 1 });

  // due by Redis time: promoted by the sweep
  let result = await registry.sweep('swept');
  for (const until = Date.now() + 5000; result.promoted === 0 && Date.now() < until; ) result = await registry.sweep('swept');
  expect(result.promoted).toBe(1);
  const after = status();
  expect(after.lastRunAt).not.toBeNull();
  expect(after.lastRunAt).not.toBe(before);
  expect(after.lastResult).toEqual(result);

  // a bad limit is the caller's error, not a failing sweeper
  await expect(registry.sweep('swept', { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
  await expect(registry.sweep('swept', { limt: 5 } as { limit?: number })).rejects.toBeInstanceOf(ValidationError);
  expect(status().lastError).toBeNull();
});
