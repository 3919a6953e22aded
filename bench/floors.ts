/**
 * The floors: raw ioredis on a plain list, no queue semantics at all. What relq costs on
 * top of moving the same jobs through Redis. The naive floor pops one job per connection and
 * round trip; the batch floor moves them the way relq does at its best, without its
 * guarantees (no lease, no retry, no record of a job in flight).
 */
import { Redis } from 'ioredis';
import type { Adapter, Hooks } from './adapters.js';
import type { Payload } from './payload.js';

const FLOOR_KEY = 'floor:list';
/** The batch floor's acknowledgements: a count of the jobs its handlers finished. */
const DONE_KEY = 'floor:done';

export const ioredisFloor: Adapter = {
  name: 'ioredis',
  label: 'ioredis floor',
  settings: [
    'No queue semantics at all: add = `LPUSH` of the JSON (batch: a pipeline of 1,000 LPUSH), process = `BRPOP` + `JSON.parse`, one connection per concurrency slot.',
  ],
  async producer(conn) {
    const r = new Redis({ host: conn.host, port: conn.port });
    await r.ping();
    return {
      add: (d) => r.lpush(FLOOR_KEY, JSON.stringify(d)),
      addBatch: (ds) => {
        const p = r.pipeline();
        for (const d of ds) p.lpush(FLOOR_KEY, JSON.stringify(d));
        return p.exec();
      },
      close: async () => {
        await r.quit();
      },
    };
  },
  async consumer(conn, concurrency, hooks) {
    const clients = Array.from({ length: concurrency }, () => new Redis({ host: conn.host, port: conn.port }));
    await Promise.all(clients.map((c) => c.ping()));
    let stop = false;
    const loops = clients.map(async (c) => {
      while (!stop) {
        let res: [string, string] | null;
        try {
          res = await c.brpop(FLOOR_KEY, 1);
        } catch (err) {
          if (stop) return;
          throw err;
        }
        if (!res) continue;
        const data = JSON.parse(res[1]) as Payload;
        hooks.onStart?.(data);
        hooks.onDone();
      }
    });
    return {
      close: async () => {
        stop = true;
        for (const c of clients) c.disconnect();
        await Promise.allSettled(loops);
      },
    };
  },
};


/**
 * The batch floor's lanes, as relq's Worker has them: two where there are two slots or more
 * (one lane's round trip overlaps the other's handlers), each taking up to its share of the slots.
 */
function laneSizes(concurrency: number): number[] {
  const lanes = concurrency >= 2 ? 2 : 1;
  return Array.from({ length: lanes }, (_, i) => Math.floor(concurrency / lanes) + (i < concurrency % lanes ? 1 : 0));
}

export const ioredisBatchFloor: Adapter = {
  name: 'ioredis-batch',
  label: 'ioredis batch floor',
  addsLike: 'ioredis',
  settings: [
    "The ioredis floor's adds; process: two lanes (one at concurrency 1), each on its own connection, taking up to half the slots' jobs with one `RPOP key count` (`BLMPOP` only when the list is empty) and running their handlers at once; a batch is acknowledged by one `INCRBY` of a done counter, pipelined with the lane's next `RPOP` (one round trip per batch, as relq settles with its next lease). No leases, no retries, nothing kept of a job in flight.",
  ],
  producer: (conn) => ioredisFloor.producer(conn),
  async consumer(conn, concurrency, hooks) {
    const sizes = laneSizes(concurrency);
    const clients = sizes.map(() => new Redis({ host: conn.host, port: conn.port }));
    await Promise.all(clients.map((c) => c.ping()));
    let stop = false;
    const loops = sizes.map(async (size, i) => {
      const c = clients[i]!;
      /** Jobs finished, not yet acknowledged: their INCRBY goes with the lane's next pop. */
      let finished = 0;
      while (!stop) {
        try {
          const p = c.pipeline();
          if (finished) p.incrby(DONE_KEY, finished);
          p.rpop(FLOOR_KEY, size);
          const replies = (await p.exec())!;
          for (const [err] of replies) if (err) throw err;
          for (let k = 0; k < finished; k++) hooks.onDone();
          finished = 0;
          const jobs = (replies.at(-1)![1] as string[] | null) ?? (await c.blmpop(1, 1, FLOOR_KEY, 'RIGHT', 'COUNT', size))?.[1];
          if (!jobs) continue;
          await Promise.all(jobs.map((json) => handle(JSON.parse(json) as Payload, hooks)));
          finished = jobs.length;
        } catch (err) {
          if (stop) return;
          throw err;
        }
      }
    });
    return {
      close: async () => {
        stop = true;
        for (const c of clients) c.disconnect();
        await Promise.allSettled(loops);
      },
    };
  },
};

/** The no-op handler every library runs: it only reports the job's start (latency runs). */
async function handle(data: Payload, hooks: Hooks): Promise<void> {
  hooks.onStart?.(data);
}
