/**
 * keepLogs (a job's own cap on its log lines, the queue's maxLogLines otherwise) and
 * clearLogs(id, { keep }) (BullMQ's): through a Worker's job, a lease, and a lease rebuilt from
 * its id and token.
 */
import { Worker, type Job } from '../../lib/index.js';
import { commandStats, statsDelta, useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

test("each job keeps its own keepLogs lines, the others the queue's maxLogLines", async () => {
  const q = res.queue<string>('logs', { maxLogLines: 3 });
  const one = await q.add('one', { keepLogs: 1 });
  const plain = await q.add('plain');
  const five = await q.add('five', { keepLogs: 5 });
  res.worker(
    new Worker<string>(q, async (job: Job<string>) => {
      for (const line of lines(6)) await job.log(line);
    }),
  );
  await waitUntil(async () => (await q.counts()).completed === 3, 'the three jobs');
  expect((await q.getJob(one.id))!.logs).toEqual(['line 6']);
  expect((await q.getJob(plain.id))!.logs).toEqual(['line 4', 'line 5', 'line 6']);
  expect((await q.getJob(five.id))!.logs).toEqual(lines(6).slice(1));
});

test("a lease rebuilt from its id and token keeps the job's own keepLogs (read from its record); a full lease reads nothing more", async () => {
  const q = res.queue<string>('logs', { maxLogLines: 10 });
  const obs = res.client();
  const { id } = await q.add('a', { keepLogs: 2 });
  const [lease] = await q.lease();
  const rebuilt = { job: { id }, token: lease!.token };
  for (const line of lines(4)) expect(await q.log(rebuilt, line)).toBe(true);
  expect((await q.getJob(id))!.logs).toEqual(['line 3', 'line 4']);

  const hgets = async (log: () => Promise<boolean>): Promise<number> => {
    const before = await commandStats(obs);
    expect(await log()).toBe(true);
    return statsDelta(before, await commandStats(obs)).hget ?? 0;
  };
  const full = await hgets(() => q.log(lease!, 'full'));
  expect(await hgets(() => q.log(rebuilt, 'rebuilt'))).toBe(full + 1); // its record
  expect((await q.getJob(id))!.logs).toEqual(['full', 'rebuilt']);

  const { id: plain } = await q.add('b');
  await q.ack(lease!);
  const [other] = await q.lease();
  for (const line of lines(12)) await q.log({ job: { id: plain }, token: other!.token }, line);
  expect((await q.getJob(plain))!.logs).toEqual(lines(12).slice(2)); // the queue's 10
});

test('clearLogs removes the lines, or all but the last keep, in any state; how many it removed', async () => {
  const q = res.queue<string>();
  const { id } = await q.add('a');
  const [lease] = await q.lease();
  for (const line of lines(5)) await q.log(lease!, line);
  expect(await q.clearLogs(id, { keep: 2 })).toBe(3);
  expect((await q.getJob(id))!.logs).toEqual(['line 4', 'line 5']);
  expect(await q.clearLogs(id, { keep: 5 })).toBe(0);
  await q.log(lease!, 'after');
  expect((await q.getJob(id))!.logs).toEqual(['line 4', 'line 5', 'after']);
  await q.ack(lease!, 'done');
  expect(await q.clearLogs(id)).toBe(3); // completed: kept with its job, cleared all the same
  expect((await q.getJob(id))!).toMatchObject({ state: 'completed', logs: [] });
  expect(await q.clearLogs(id)).toBe(0);
  expect(await q.clearLogs('no-such-job')).toBe(0);
});
