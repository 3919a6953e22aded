/**
 * Shutdown and jobs waiting for a handler slot: a leased job whose handler is at its
 * concurrency limit when shutdown starts is given back to pending at once (no failed attempt)
 * and never started during the drain, while the running job finishes and is acked.
 */
import { Module } from '@nestjs/common';
import { Process, Processor, QueueModule, QueueRegistry, type Job } from '../../lib/nest/index.js';
import { Queue as EngineQueue } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { deferred, waitFor, useApps } from './app-bed.js';

const bed = useApps();
const { apps, start } = bed;

test('jobs waiting for a handler slot are given back at once on shutdown and never started', async () => {
  const prefix = uniquePrefix();
  const firstStarted = deferred<string>();
  const finishFirst = deferred();
  const started: string[] = [];

  // The loop leases up to 3 jobs; the handler runs one at a time, so two wait for its slot.
  @Processor('slots', { concurrency: 3, leaseMs: 30_000 })
  class OneAtATime {
    @Process({ concurrency: 1 })
    async run(job: Job<{ n: number }>): Promise<string> {
      started.push(job.id);
      firstStarted.resolve(job.id);
      await finishFirst.promise;
      return `done ${job.data.n}`;
    }
  }
  @Module({ imports: [QueueModule.registerQueue({ name: 'slots' })], providers: [OneAtATime] })
  class M {}

  const app = await start(
    QueueModule.forRoot({ connection: bed.redis.url, prefix, shutdown: { drainTimeoutMs: 20_000 }, defaults: { processor: { blockMs: 200 } } }),
    M,
  );
  const registry = app.get(QueueRegistry);
  const queue = registry.getQueue<{ n: number }, string>('slots');
  const observer = new EngineQueue<{ n: number }, string>('slots', { connection: bed.redis.url, prefix });
  try {
    const jobs = await queue.addBulk([1, 2, 3].map((n) => ({ data: { n } })));
    const running = await firstStarted.promise;
    await waitFor(async () => (await observer.counts()).working === 3, 10_000, 'all three jobs leased');
    const handlerStatus = () => registry.getProcessors().flatMap((p) => p.handlers);
    expect(handlerStatus()).toEqual([expect.objectContaining({ active: 1, waiting: 2 })]);

    // Shutdown starts; the running handler is still busy (the drain waits for it).
    const closing = app.close();
    apps.length = 0;
    const waitingIds = jobs.map((j) => j.id).filter((id) => id !== running);
    await waitFor(
      async () => (await Promise.all(waitingIds.map((id) => observer.getJob(id)))).every((j) => j?.state === 'pending'),
      10_000,
      'the two waiting jobs to be given back while the first still runs',
    );
    expect((await observer.getJob(running))?.state).toBe('working');
    for (const id of waitingIds) {
      expect(await observer.getJob(id)).toMatchObject({ state: 'pending', failures: 0, requeues: 1 });
    }

    finishFirst.resolve();
    await closing;
    expect(started).toEqual([running]); // the freed slot started nothing during the drain
    expect(await observer.getJob(running)).toMatchObject({ state: 'completed', result: `done ${jobs.findIndex((j) => j.id === running) + 1}`, failures: 0 });
    expect(await observer.counts()).toMatchObject({ pending: 2, working: 0, completed: 1, dead: 0 });
  } finally {
    finishFirst.resolve();
    await observer.close();
  }
});
