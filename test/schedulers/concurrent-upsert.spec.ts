/**
 * Upserts of one scheduler id from many Queue objects at once, each with its own spec: none
 * fails, the last to run wins, and what is left is one whole scheduler with its one job made
 * ahead, which a tick then moves on.
 */
import type { Queue } from '../../lib/index.js';
import { untilRedisTime, useRedis } from '../support/engine-harness.js';
import { slotJobs } from './slot-jobs.js';

const res = useRedis();

test('ten Queue objects upserting one id with different specs at once: all resolve, one scheduler and one job made ahead are left', async () => {
  const first = res.queue('many');
  const c = res.client();
  const queues: Array<Queue<any, any>> = [first, ...Array.from({ length: 9 }, () => res.twin(first))];
  for (let round = 0; round < 5; round++) {
    const everyMs = (i: number) => 60_000 + round * 1_000 + i * 100;
    const written = await Promise.all(queues.map((q, i) => q.upsertScheduler('s', { everyMs: everyMs(i) }, { data: { i } })));
    expect(written).toEqual(queues.map(() => true)); // each spec differs from whatever it found
    const [info, ...others] = await first.getSchedulers();
    expect(others).toEqual([]);
    const i = (info!.template.data as { i: number }).i;
    expect(info).toMatchObject({ id: 's', spec: { everyMs: everyMs(i) }, made: 1 });
    expect(info!.nextRunAt! % everyMs(i)).toBe(0);
    expect(await slotJobs(c, first, 's')).toEqual([info!.nextRunAt]);
    expect(await first.counts()).toMatchObject({ delayed: 1, pending: 0 });
  }
});

test('the scheduler left by a race ticks on as itself', async () => {
  const first = res.queue('ticks');
  const c = res.client();
  const queues: Array<Queue<any, any>> = [first, ...Array.from({ length: 9 }, () => res.twin(first))];
  await Promise.all(queues.map((q, i) => q.upsertScheduler('t', { everyMs: 200 + i * 10 }, { data: { i } })));
  const [info] = await first.getSchedulers();
  const every = (info!.spec as { everyMs: number }).everyMs;
  expect(every).toBe(200 + (info!.template.data as { i: number }).i * 10); // config and template of one upsert
  await untilRedisTime(c, info!.nextRunAt!);
  expect(await first.runSchedulers()).toMatchObject({ advanced: 1, added: 1 });
  expect(await slotJobs(c, first, 't')).toEqual([info!.nextRunAt!, info!.nextRunAt! + every]);
  expect((await first.getJob(`repeat:t:${info!.nextRunAt! + every}`))?.data).toEqual(info!.template.data);
});
