/**
 * Schedulers in Nest: declared in registerQueue({ schedulers }) and with @Scheduled() on a
 * @Process() method, upserted at bootstrap and ticked by the app; a second instance changes
 * nothing; removeUndeclared removes what the app no longer declares; the health report
 * carries the schedulers' counts.
 */
import { Injectable, Module } from '@nestjs/common';
import { Process, Processor, QueueHealthService, QueueModule, QueueRegistry, Scheduled } from '../../lib/nest/index.js';
import type { Job } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis.js';
import { useApps, waitFor } from './app-bed.js';

const bed = useApps();

test('registerQueue({ schedulers }) and @Scheduled() are upserted and run; removeUndeclared removes the rest', async () => {
  const prefix = uniquePrefix();
  const seen: string[] = [];

  @Processor('reports')
  @Injectable()
  class Reports {
    @Scheduled('nightly', { cron: '0 0 3 * * *', tz: 'Europe/Paris' }, { data: { kind: 'nightly' } })
    @Scheduled('every-300', { everyMs: 300 })
    @Process('report')
    report(job: Job<unknown>): void {
      seen.push(`${job.name}:${job.id}`);
    }

    @Process()
    other(job: Job<unknown>): void {
      seen.push(`default:${job.id}`);
    }
  }

  const declared = [{ id: 'beat', spec: { everyMs: 200 }, template: { data: 'b' } }];
  @Module({ imports: [QueueModule.registerQueue({ name: 'reports', schedulers: declared })], providers: [Reports] })
  class M {}
  const root = () => QueueModule.forRoot({ connection: bed.redis.url, prefix });
  const app = await bed.start(root(), M);
  const queue = app.get(QueueRegistry).getQueue('reports');
  expect((await queue.getSchedulers()).map((s) => s.id)).toEqual(['beat', 'every-300', 'nightly']);
  const nightly = (await queue.getSchedulers()).find((s) => s.id === 'nightly')!;
  expect(nightly.template).toEqual({ data: { kind: 'nightly' }, opts: { name: 'report' } });

  // the app's ticker keeps them going; the handlers get the jobs by name
  await waitFor(() => seen.filter((s) => s.startsWith('report:repeat:every-300:')).length >= 3 && seen.filter((s) => s.startsWith('default:repeat:beat:')).length >= 3, 10_000, 'scheduled jobs handled');

  // a second instance with the same declarations writes nothing
  const made = (await queue.getSchedulers()).map((s) => s.made);
  const again = await bed.start(root(), M);
  expect((await again.get(QueueRegistry).getQueue('reports').getSchedulers()).map((s) => s.id)).toEqual(['beat', 'every-300', 'nightly']);
  const health = await app.get(QueueHealthService).check();
  expect(health.queues.reports!.counts).toMatchObject({ schedulers: 3, schedulersOverdue: 0 });
  expect((await queue.getSchedulers()).map((s) => s.made).every((n, i) => n >= made[i]!)).toBe(true);
  await again.close();
  bed.apps.splice(bed.apps.indexOf(again), 1);
  await app.close();
  bed.apps.splice(bed.apps.indexOf(app), 1);

  // an app that declares only 'beat' and asks to remove the others
  @Module({ imports: [QueueModule.registerQueue({ name: 'reports', schedulers: declared, schedulerOptions: { removeUndeclared: true, tick: false } })] })
  class Only {}
  const third = await bed.start(root(), Only);
  expect((await third.get(QueueRegistry).getQueue('reports').getSchedulers()).map((s) => s.id)).toEqual(['beat']);
});

test('without removeUndeclared, schedulers stored by others stay; bad declarations stop the app', async () => {
  const prefix = uniquePrefix();
  @Module({ imports: [QueueModule.registerQueue({ name: 'keep', schedulers: [{ id: 'a', spec: { everyMs: 60_000 } }] })] })
  class A {}
  const first = await bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), A);
  await first.get(QueueRegistry).getQueue('keep').upsertScheduler('other', { everyMs: 60_000 });
  @Module({ imports: [QueueModule.registerQueue({ name: 'keep', schedulers: [{ id: 'b', spec: { everyMs: 60_000 } }] })] })
  class B {}
  const second = await bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), B);
  expect((await second.get(QueueRegistry).getQueue('keep').getSchedulers()).map((s) => s.id)).toEqual(['a', 'b', 'other']);

  @Module({ imports: [QueueModule.registerQueue({ name: 'bad', schedulers: [{ id: 'x', spec: { cron: 'nope' } }] })] })
  class Bad {}
  await expect(bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), Bad)).rejects.toThrow(/schedulers\[0\]\.spec\.cron/);
  @Module({ imports: [QueueModule.registerQueue({ name: 'bad2', schedulers: [{ id: 'x', spec: { everyMs: 1000 }, template: { opts: { priority: 99999 } } }] })] })
  class Bad2 {}
  await expect(bed.start(QueueModule.forRoot({ connection: bed.redis.url, prefix }), Bad2)).rejects.toThrow(/template\.opts\.priority/);
});
