/**
 * Job schedulers on a real Redis, through the public API: one job per slot, cron in a time
 * zone, startAt / endAt / limit, both missed-slot policies, remove, list, validation with
 * nothing written, counts and deleteQueue.
 */
import { SchedulerTicker, ValidationError, type Queue } from '../../lib/index.js';
import { redisNow, untilRedisTime, useRedis, waitUntil } from '../support/engine-harness.js';
import { drainJobs, keysOf, slotJobs } from './slot-jobs.js';

const res = useRedis();

function ticker(q: Queue<any, any>): SchedulerTicker {
  const t = new SchedulerTicker(q, { maxIntervalMs: 200 });
  t.start();
  return t;
}

test('everyMs: the next slot is queued at once; a ticker adds one job per slot, aligned, none twice', async () => {
  const q = res.queue('every');
  const c = res.client();
  expect(await q.upsertScheduler('beat', { everyMs: 200 }, { data: { n: 1 }, opts: { name: 'beat', attempts: 2 } })).toBe(true);
  expect(await q.upsertScheduler('beat', { everyMs: 200 }, { data: { n: 1 }, opts: { name: 'beat', attempts: 2 } })).toBe(false); // unchanged
  const [info] = await q.getSchedulers();
  expect(info).toMatchObject({ id: 'beat', spec: { everyMs: 200, missed: 'once' }, template: { data: { n: 1 }, opts: { name: 'beat', attempts: 2 } }, made: 1 });
  expect(info!.nextRunAt! % 200).toBe(0);
  expect(await slotJobs(c, q, 'beat')).toEqual([info!.nextRunAt]);
  expect(await q.getJob(`repeat:beat:${info!.nextRunAt}`)).toMatchObject({ state: 'delayed', name: 'beat', data: { n: 1 } });

  const t = ticker(q);
  try {
    await waitUntil(async () => (await slotJobs(c, q, 'beat')).length >= 8, '8 slots', 10_000);
  } finally {
    await t.stop();
  }
  const slots = await slotJobs(c, q, 'beat');
  slots.forEach((s, i) => expect(s).toBe(slots[0]! + i * 200)); // contiguous: none missed, none twice
  expect(slots[0]).toBe(info!.nextRunAt);
  const now = await redisNow(c);
  expect(slots[slots.length - 1]!).toBeGreaterThan(now - 200); // the last is the one queued ahead
  const ids = await drainJobs(q);
  expect(new Set(ids).size).toBe(ids.length);
});

test('many ticks at the same moment: one wins each slot (the compare-and-set)', async () => {
  const q = res.queue('race');
  const c = res.client();
  await q.upsertScheduler('r', { everyMs: 100 });
  const twins = [q, res.twin(q), res.twin(q), res.twin(q)];
  let advanced = 0;
  let added = 0;
  for (let round = 0; round < 5; round++) {
    const [{ nextRunAt }] = await q.getSchedulers();
    await untilRedisTime(c, nextRunAt!);
    const rs = await Promise.all(twins.map((t) => t.runSchedulers()));
    advanced += rs.reduce((a, r) => a + r.advanced, 0);
    added += rs.reduce((a, r) => a + r.added, 0);
  }
  expect(advanced).toBe(5);
  const slots = await slotJobs(c, q, 'r');
  expect(added).toBe(slots.length - 1); // the first was the upsert's
  expect(new Set(slots).size).toBe(slots.length);
});

test('cron with a time zone: slots of the expression in that zone', async () => {
  const q = res.queue('cron');
  const c = res.client();
  // 09:00 in Tokyo is 00:00 UTC (no daylight saving there)
  await q.upsertScheduler('tokyo', { cron: '0 0 9 * * *', tz: 'Asia/Tokyo' });
  const [tokyo] = await q.getSchedulers();
  expect(new Date(tokyo!.nextRunAt!).toISOString()).toMatch(/T00:00:00\.000Z$/);
  expect(tokyo!.nextRunAt! - (await redisNow(c))).toBeLessThanOrEqual(86_400_000);

  await q.upsertScheduler('sec', { cron: '* * * * * *', tz: 'America/New_York' }, { opts: { name: 'tick' } });
  const t = ticker(q);
  try {
    await waitUntil(async () => (await slotJobs(c, q, 'sec')).length >= 3, '3 slots', 10_000);
  } finally {
    await t.stop();
  }
  const slots = await slotJobs(c, q, 'sec');
  slots.forEach((s, i) => expect(s).toBe(slots[0]! + i * 1000));
  expect(slots[0]! % 1000).toBe(0);
});

test('startAt, endAt and limit bound the slots; an ended scheduler stays listed without a next run', async () => {
  const q = res.queue('bounds');
  const c = res.client();
  const start = (await redisNow(c)) + 300;
  await q.upsertScheduler('lim', { everyMs: 100, startAt: start, limit: 3 });
  await q.upsertScheduler('end', { everyMs: 100, startAt: new Date(start), endAt: start + 250 });
  const listed = await q.getSchedulers();
  expect(listed.map((s) => [s.id, s.nextRunAt])).toEqual([
    ['end', start],
    ['lim', start],
  ]);
  const t = ticker(q);
  try {
    await waitUntil(async () => (await q.getSchedulers()).every((s) => s.nextRunAt === null), 'both ended', 10_000);
  } finally {
    await t.stop();
  }
  expect(await slotJobs(c, q, 'lim')).toEqual([start, start + 100, start + 200]);
  expect(await slotJobs(c, q, 'end')).toEqual([start, start + 100, start + 200]);
  expect((await q.getSchedulers()).map((s) => s.made)).toEqual([3, 3]);
});

test.each([
  ['once', 3],
  ['skip', 2],
] as const)("missed: '%s' after ticks stopped for a while", async (missed, jobs) => {
  const q = res.queue(`missed-${missed}`);
  const c = res.client();
  await q.upsertScheduler('m', { everyMs: 200, missed });
  const [{ nextRunAt: first }] = await q.getSchedulers();
  await untilRedisTime(c, first! + 1000); // five slots pass with nobody ticking
  const now = await redisNow(c);
  const r = await q.runSchedulers();
  const slots = await slotJobs(c, q, 'm');
  expect(slots.length).toBe(jobs);
  expect(r.added).toBe(jobs - 1);
  expect(slots[0]).toBe(first); // the job queued ahead runs, late
  const next = slots[slots.length - 1]!;
  expect(next).toBeGreaterThan(now);
  expect(next - now).toBeLessThanOrEqual(200);
  if (missed === 'once') {
    expect(slots[1]).toBe(next - 200); // the latest missed slot, due at once
    expect(slots[1]! - first!).toBeGreaterThanOrEqual(800);
  }
  const due = await drainJobs(q); // what is due now: the late job (and the catch-up)
  expect(due.length).toBe(jobs - 1);
});

test('removeScheduler removes it and its queued job; jobs of due slots stay', async () => {
  const q = res.queue('remove');
  const c = res.client();
  await q.upsertScheduler('gone', { everyMs: 100 });
  await waitUntil(async () => (await redisNow(c)) > (await q.getSchedulers())[0]!.nextRunAt!, 'first slot due');
  await q.runSchedulers(); // the first slot's job is due; the next one is queued ahead
  const [due, ahead] = await slotJobs(c, q, 'gone');
  expect(await q.removeScheduler('gone')).toBe(true);
  expect(await q.removeScheduler('gone')).toBe(false);
  expect(await q.getSchedulers()).toEqual([]);
  expect(await q.getJob(`repeat:gone:${ahead}`)).toBeNull();
  expect(await q.getJob(`repeat:gone:${due}`)).not.toBeNull();
  await untilRedisTime(c, ahead! + 1); // the removed scheduler's next slot has passed
  expect(await q.runSchedulers()).toMatchObject({ advanced: 0, added: 0, nextDueAt: null });
  expect(await slotJobs(c, q, 'gone')).toEqual([due]);
});

test('a changed spec replaces the queued job and starts the count again', async () => {
  const q = res.queue('change');
  const c = res.client();
  await q.upsertScheduler('x', { everyMs: 60_000 });
  const [before] = await slotJobs(c, q, 'x');
  expect(await q.upsertScheduler('x', { everyMs: 60_000 }, { opts: { priority: 5 } })).toBe(true);
  expect(await slotJobs(c, q, 'x')).toEqual([before]); // same slot, the new record
  expect(await q.getJob(`repeat:x:${before}`)).toMatchObject({ priority: 5 });
  expect(await q.upsertScheduler('x', { everyMs: 3_600_000 })).toBe(true);
  const [info] = await q.getSchedulers();
  expect(await slotJobs(c, q, 'x')).toEqual([info!.nextRunAt]);
  expect(info!.made).toBe(1);
});

test('validation: a typed error naming the field, and nothing written', async () => {
  const q = res.queue('invalid');
  const c = res.client();
  await q.upsertScheduler('ok', { everyMs: 60_000 });
  const before = await keysOf(c, q);
  const snapshot = await c.hgetall(q.keys.derived.schedulers);
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['spec.cron', () => q.upsertScheduler('a', { cron: '61 * * * *' })],
    ['spec.cron', () => q.upsertScheduler('a', { cron: 'every day' })],
    ['spec.tz', () => q.upsertScheduler('a', { cron: '* * * * *', tz: 'Mars/Olympus' })],
    ['spec', () => q.upsertScheduler('a', { cron: '* * * * *', everyMs: 1000 } as never)],
    ['spec', () => q.upsertScheduler('a', {} as never)],
    ['spec.everyMs', () => q.upsertScheduler('a', { everyMs: 50 })],
    ['spec.tz', () => q.upsertScheduler('a', { everyMs: 1000, tz: 'UTC' } as never)],
    ['spec.endAt', () => q.upsertScheduler('a', { everyMs: 1000, startAt: 2000, endAt: 1000 })],
    ['spec.limit', () => q.upsertScheduler('a', { everyMs: 1000, limit: 0 })],
    ['spec.missed', () => q.upsertScheduler('a', { everyMs: 1000, missed: 'all' as never })],
    ['template.opts.jobId', () => q.upsertScheduler('a', { everyMs: 1000 }, { opts: { jobId: 'j' } as never })],
    ['template.opts.delayMs', () => q.upsertScheduler('a', { everyMs: 1000 }, { opts: { delayMs: 5 } as never })],
    ['template.opts.priority', () => q.upsertScheduler('a', { everyMs: 1000 }, { opts: { priority: 5000 } })],
    ['template.opts.attempts', () => q.upsertScheduler('a', { everyMs: 1000 }, { opts: { attempts: 0 } })],
    ['template.opts', () => q.upsertScheduler('a', { everyMs: 1000 }, { opts: { colour: 'red' } as never })],
    ['template.data', () => q.upsertScheduler('a', { everyMs: 1000 }, { data: () => 1 })],
    ['template', () => q.upsertScheduler('a', { everyMs: 1000 }, { extra: 1 } as never)],
    ['id', () => q.upsertScheduler('', { everyMs: 1000 })],
    ['id', () => q.upsertScheduler('x'.repeat(201), { everyMs: 1000 })],
  ];
  for (const [field, call] of cases) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(`${field}: ${(err as ValidationError).field}`).toBe(`${field}: ${field}`);
  }
  expect(await keysOf(c, q)).toEqual(before);
  expect(await c.hgetall(q.keys.derived.schedulers)).toEqual(snapshot);
});

test('counts() shows the schedulers and the overdue ones; deleteQueue removes their keys', async () => {
  const q = res.queue('counts');
  const c = res.client();
  expect((await q.counts()).schedulers).toBeUndefined();
  await q.upsertScheduler('late', { everyMs: 100 });
  await q.upsertScheduler('later', { cron: '0 0 1 1 *' });
  expect(await q.counts()).toMatchObject({ schedulers: 2, schedulersOverdue: 0 });
  // nobody ticks: once the 100 ms scheduler's next slot is over 5 s late it counts as overdue
  await waitUntil(async () => (await q.counts()).schedulersOverdue === 1, 'the scheduler overdue', 10_000);
  expect(await q.counts()).toMatchObject({ schedulers: 2, schedulersOverdue: 1 });
  await q.runSchedulers();
  expect(await q.counts()).toMatchObject({ schedulers: 2, schedulersOverdue: 0 });
  await q.deleteQueue({ tombstoneMs: 1000 });
  for (const k of [q.keys.derived.schedulers, q.keys.derived.schedulerState, q.keys.derived.schedulerNext]) {
    expect(await c.exists(k)).toBe(0);
  }
}, 15_000);
