import { Worker } from '../../lib/index.js';
import { useRedis, sleep, waitUntil } from './_helpers.js';

const res = useRedis();

describe('pause / resume', () => {
  test('while paused lease returns nothing and adds go on; after resume it leases', async () => {
    const q = res.queue<string>();
    await q.add('before');
    await q.pause();
    await q.add('during');
    expect(await q.lease({ count: 10 })).toEqual([]);
    expect(await q.counts()).toMatchObject({ pending: 2, paused: true });
    await q.resume();
    expect((await q.lease({ count: 10 })).map((l) => l.job.data)).toEqual(['before', 'during']);
  });

  test('a pause from another connection applies to every leaser of the queue', async () => {
    const q = res.queue<string>();
    const admin = res.twin<string>(q);
    await q.add('x');
    await admin.pause();
    expect(await q.lease()).toEqual([]);
    await admin.resume();
    expect(await q.lease()).toHaveLength(1);
  });

  test('a blocked lease stays empty while paused and wakes on resume', async () => {
    const q = res.queue<string>();
    const admin = res.twin<string>(q);
    await admin.pause();
    await admin.add('x');
    const t = Date.now();
    const pending = q.lease({ blockMs: 5000 });
    await sleep(400);
    const tResume = Date.now();
    await admin.resume();
    const leases = await pending;
    expect(leases.map((l) => l.job.data)).toEqual(['x']);
    expect(Date.now() - t).toBeGreaterThanOrEqual(390);
    expect(Date.now() - tResume).toBeLessThan(700);
  });

  test('settling goes on while paused', async () => {
    const q = res.queue<string>();
    await q.add('x');
    const [l] = await q.lease();
    await q.pause();
    expect(await q.ack(l!)).toBe(true);
    expect(await q.touch(l!)).toBe(false);
  });

  test('a Worker stops taking jobs while paused and resumes promptly', async () => {
    const q = res.queue<number>();
    const admin = res.twin<number>(q);
    const seen: number[] = [];
    res.worker(new Worker<number>(q, async (job) => void seen.push(job.data), { blockMs: 5000 }));
    await q.add(1);
    await waitUntil(() => seen.length === 1, 'first job');
    await admin.pause();
    await admin.add(2);
    await sleep(400);
    expect(seen).toEqual([1]);
    const t = Date.now();
    await admin.resume();
    await waitUntil(() => seen.length === 2, 'job after resume', 3000);
    expect(Date.now() - t).toBeLessThan(1000);
  });
});
