/**
 * A flow processed by workers in two child processes: every parent runs after its children,
 * whichever process ran them, and reads all of their results.
 */
import { join } from 'node:path';
import { Queue, type FlowJob } from '../../lib/index.js';
import { useEngineChildren } from '../support/engine-child.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitUntil } from '../support/wait.js';

const FIXTURE = join(process.cwd(), 'test', 'flows', 'fixtures', 'flow-worker.mjs');
const children = useEngineChildren();
let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

interface Done {
  by: string;
  kids: number;
  sum: number;
}

test('workers in two processes run a three-level flow of 61 jobs; each parent reads all its children', async () => {
  const prefix = uniquePrefix();
  const q = new Queue<number, Done>('mp-flow', { connection: redis.url, prefix });
  try {
    const env = { REDIS_URL: redis.url, PREFIX: prefix, QUEUE: 'mp-flow' };
    const procs = [children.fork(FIXTURE, { ...env, NAME: 'a' }), children.fork(FIXTURE, { ...env, NAME: 'b' })];
    await Promise.all(procs.map((p) => p.waitFor((m) => m.type === 'ready')));
    const flow: FlowJob<number> = {
      data: 0,
      children: Array.from({ length: 10 }, (_, i) => ({ data: i, children: Array.from({ length: 5 }, (_, j) => ({ data: j })) })),
    };
    const added = await q.addFlow(flow);
    await waitUntil(async () => (await q.getJob(added.id))?.state === 'completed', 'root completed', 30_000);
    const root = await q.getJob(added.id);
    // sum counts every job of the tree once: 1 + 10 × (1 + 5)
    expect(root!.result).toMatchObject({ kids: 10, sum: 61 });
    const by = new Set<string>();
    for (const mid of added.children) {
      const info = await q.getJob(mid.id);
      expect(info!.result).toMatchObject({ kids: 5, sum: 6 });
      expect(Object.keys(info!.children!.results).sort()).toEqual(mid.children.map((c) => c.id).sort());
      for (const r of Object.values(info!.children!.results) as Done[]) by.add(r.by);
    }
    expect([...by].sort()).toEqual(['a', 'b']);
    expect(await q.counts()).toMatchObject({ pending: 0, working: 0, waitingChildren: 0, completed: 61 });
  } finally {
    await q.close();
  }
}, 60_000);
