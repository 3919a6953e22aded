/**
 * Redis CPU per job of relq's scripts alone (no Node in the way): a sequential loop of
 * add one by one, then lease+settle in steps of `count`. Development aid.
 */
import { Queue } from '../lib/index.js';
import type { SettleItem } from '../lib/core/settles/settle-items.js';
import { ackItem } from '../lib/core/settles/settle-items.js';
import { makePayload, type Payload } from './payload.js';
import { startRedis } from './redis-server.js';
import { internalsOf } from '../lib/core/queue/internals.js';

function cpu(info: string): number {
  const u = Number(/used_cpu_user:([\d.]+)/.exec(info)![1]);
  const s = Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
  return (u + s) * 1e6;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20000);
  const count = Number(process.argv[3] ?? 10);
  const events = process.argv[4] !== 'off';
  const redis = await startRedis();
  const q = new Queue<Payload>('bench', { connection: { host: redis.host, port: redis.port }, events });
  const c = q.client;
  try {
    for (let rep = 0; rep < 3; rep++) {
      await q.add(makePayload(0));
      let t0 = cpu(await c.info('cpu'));
      let w0 = performance.now();
      for (let i = 0; i < n; i++) await q.add(makePayload(i));
      let t1 = cpu(await c.info('cpu'));
      console.log(`add one by one: ${((t1 - t0) / n).toFixed(1)} µs Redis CPU/job, ${((performance.now() - w0) * 1000 / n).toFixed(1)} µs wall/job`);
      let items: SettleItem[] = [];
      let done = 0;
      t0 = cpu(await c.info('cpu'));
      w0 = performance.now();
      for (;;) {
        const step = await internalsOf<Payload>(q)!.leaseStep(items, count, 30000, false);
        done += items.length;
        items = step.leases.map((l) => ackItem(l, ''));
        if (step.leases.length === 0) break;
      }
      t1 = cpu(await c.info('cpu'));
      console.log(`lease+ack count=${count}: ${((t1 - t0) / done).toFixed(1)} µs Redis CPU/job, ${((performance.now() - w0) * 1000 / done).toFixed(1)} µs wall/job (${done})`);
    }
  } finally {
    await q.close();
    await redis.stop();
  }
}

await main();
