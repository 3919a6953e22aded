/**
 * What a call on one queue names: its jobs key and the extra keys of its operation, nothing
 * more (the scripts build the other queue keys from its tag, redis/keys.lua expandKeys). Each
 * key passed cost the client its encoding and the server a string and a table slot, on every
 * add, lease and settle; a lease call passed 16. A call still names a key of its queue first,
 * so a Cluster routes it and an ACL key pattern checks it.
 */
import { Worker } from '../../lib/index.js';
import { closeClient, useRedis, waitUntil } from '../support/engine-harness.js';
import { redisClient } from '../support/redis.js';

const res = useRedis();

test('add, lease, settle and read calls name the jobs key (and the replay record of a lease), never all 15 queue keys', async () => {
  const q = res.queue<number>('call-keys');
  await q.counts(); // the library checked and loaded before watching
  const mon = redisClient(res.server);
  mon.on('error', () => undefined);
  const seen: Array<{ fn: string; keys: string[] }> = [];
  const monitor = await mon.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (!/^(fcall|evalsha)$/i.test(args[0] ?? '')) return;
    const n = Number(args[2]);
    seen.push({ fn: String(args[1]).replace(/^relq_[0-9a-f]+_/, ''), keys: args.slice(3, 3 + n) });
  });
  let done = 0;
  try {
    await q.add(1);
    await q.addBulk([{ data: 2 }, { data: 3 }]);
    res.worker(new Worker(res.twin(q), async () => void done++, { concurrency: 1 }));
    await waitUntil(() => done === 3, 'three jobs done', 10_000);
    await q.counts();
    await waitUntil(() => seen.some((c) => c.fn === 'counts'), 'MONITOR to catch up', 10_000);
  } finally {
    monitor.disconnect();
    await closeClient(mon);
  }
  const jobs = q.keys.byName.jobs;
  const byFn = new Map<string, string[][]>();
  // (the registry of queue names has a key of its own, lib/core/registry/)
  for (const c of seen) if (c.fn !== 'registerQueue') byFn.set(c.fn, [...(byFn.get(c.fn) ?? []), c.keys]);
  expect([...byFn.keys()]).toEqual(expect.arrayContaining(['add', 'lease', 'counts']));
  for (const [fn, calls] of byFn) {
    for (const keys of calls) {
      expect([fn, keys[0]]).toEqual([fn, jobs]);
      // the lease and settle calls add their replay record; no call passes another queue key
      expect([fn, keys.slice(1).every((k) => k.startsWith(`${q.keys.tag}:req:`))]).toEqual([fn, true]);
      expect([fn, keys.length <= 2]).toEqual([fn, true]);
    }
  }
});
