/**
 * Ghost ids: queued ids whose job record is gone (evicted under memory pressure, or deleted
 * outside relq). A lease drops them, counts them, warns, and keeps taking, so valid jobs
 * queued behind them are not stranded.
 */
import { Worker, type RelqWarning } from '../../lib/index.js';
import { useRedis, waitUntil } from '../support/engine-harness.js';

const res = useRedis();

/** Removes the records of the first `n` jobs as eviction would (their ids stay queued). */
async function evictRecords(jobsKey: string, ids: string[]): Promise<void> {
  const obs = res.client();
  for (let i = 0; i < ids.length; i += 1000) await obs.hdel(jobsKey, ...ids.slice(i, i + 1000));
}

describe('ghost ids in the queue', () => {
  test('lease skips thousands of ghosts and returns the valid jobs behind them at once; counted and warned', async () => {
    const warnings: RelqWarning[] = [];
    const q = res.queue<number>('q', { onWarning: (w) => warnings.push(w) });
    const ghosts = await q.addBulk(Array.from({ length: 4218 }, (_, i) => ({ data: i })));
    const valid = await q.addBulk(Array.from({ length: 250 }, (_, i) => ({ data: 10_000 + i })));
    await evictRecords(q.keys.byName.jobs, ghosts.map((g) => g.id));

    const leased = [];
    // at most a thousand ghosts per call, then the call says so by a wake-up: a few calls
    for (let i = 0; i < 10 && leased.length < 250; i++) leased.push(...(await q.lease({ count: 100 })));
    expect(leased.map((l) => l.job.data)).toEqual(valid.map((_, i) => 10_000 + i).slice(0, leased.length));
    expect(leased.length).toBe(250);
    const counts = await q.counts();
    expect(counts).toMatchObject({ pending: 0, working: 250, ghosts: 4218 });
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings[0]).toMatchObject({ code: 'RELQ_GHOST_JOBS', queue: 'q' });
    expect(warnings[0]!.message).toMatch(/dropped \d+ queued id\(s\) whose job record is gone/);
    expect(warnings[0]!.message).toMatch(/noeviction/);
  });

  test('a Worker behind ghosts is not left waiting for a wake-up: every valid job runs promptly', async () => {
    const q = res.queue<number>('q', { onWarning: () => undefined });
    const ghosts = await q.addBulk(Array.from({ length: 3000 }, (_, i) => ({ data: i })));
    await evictRecords(q.keys.byName.jobs, ghosts.map((g) => g.id));
    await q.addBulk(Array.from({ length: 50 }, (_, i) => ({ data: i })));
    const seen: number[] = [];
    // blockMs far above the test's wait: only a wake-up (not a timed-out wait) can get them
    res.worker(new Worker(q, (job) => void seen.push(job.data), { concurrency: 1, blockMs: 60_000 }));
    await waitUntil(() => seen.length === 50, '50 valid jobs behind 3000 ghosts', 10_000);
    expect((await q.counts()).ghosts).toBe(3000);
  });

  test('ghosts in the priority set, a group list and the delayed set are dropped too', async () => {
    const q = res.queue<string>('q', { onWarning: () => undefined });
    const [p, g, d] = await Promise.all([
      q.add('prio ghost', { priority: 5 }),
      q.add('group ghost', { group: 'tenant-a' }),
      q.add('delayed ghost', { delayMs: 1 }),
    ]);
    await evictRecords(q.keys.byName.jobs, [p.id, g.id, d.id]);
    await q.add('prio job', { priority: 5 });
    await q.add('group job', { group: 'tenant-a' });
    await q.add('plain job');
    // the due delayed ghost is dropped where it is promoted
    await waitUntil(async () => (await q.sweep()).promoted === 1, 'the delayed ghost to come due');
    const leased = await q.lease({ count: 10 });
    expect(leased.map((l) => l.job.data).sort()).toEqual(['group job', 'plain job', 'prio job']);
    expect((await q.counts()).ghosts).toBe(2); // the delayed one never reached a lease
    for (const l of leased) expect(await q.ack(l)).toBe(true);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0 });
  });
});
