/** Helpers of the scheduler specs: reading which slots became jobs, on a real Redis. */
import type { Redis } from 'ioredis';
import type { Queue } from '../../lib/index.js';

/** Slots (ms) of scheduler `id` whose job exists, in any state, sorted; duplicates kept. */
export async function slotJobs(c: Redis, q: Queue<any, any>, id: string): Promise<number[]> {
  const ids = await c.hkeys(q.keys.byName.jobs);
  const head = `repeat:${id}:`;
  return ids
    .filter((j) => j.startsWith(head))
    .map((j) => Number(j.slice(head.length)))
    .sort((a, b) => a - b);
}

/** Every key of the queue's hash tag with its type (to show that nothing was written). */
export async function keysOf(c: Redis, q: Queue<any, any>): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await c.scan(cursor, 'MATCH', `${q.keys.tag}*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out.sort();
}

/** Consumes every job of `q` (leases and acks), returning their ids. */
export async function drainJobs(q: Queue<any, any>): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const leases = await q.lease({ count: 100, blockMs: 0 });
    if (leases.length === 0) return ids;
    for (const l of leases) ids.push(l.job.id);
    await q.ackBatch(leases);
  }
}
