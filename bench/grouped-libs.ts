/**
 * The libraries of the grouped scenario, each with one job at a time per group: relq with the
 * queue option `groupConcurrency: 1`, groupmq as it always runs. Each adds a workload in
 * batches, runs one worker with a no-op handler that reports the group of every completion,
 * and removes its queue's keys.
 */
import { Queue as GroupmqQueue, Worker as GroupmqWorker } from 'groupmq';
import { Redis } from 'ioredis';
import { Queue, Worker } from '../lib/index.js';
import { RELQ_QUEUE_OPTIONS, type Conn, type Consumer, type LibName } from './adapters.js';
import type { Payload } from './payload.js';

export type GroupedLib = 'relq' | 'groupmq';

export interface GroupedJob {
  group: string;
  data: Payload;
}

export interface GroupedDriver {
  /** Adds `jobs` in their order, `batch` per call. */
  add(jobs: readonly GroupedJob[], batch: number): Promise<void>;
  /** Starts one worker of `concurrency` slots; `onDone(group)` once each job is completed in Redis. */
  consume(concurrency: number, onDone: (group: string) => void): Promise<Consumer>;
  /** Deletes the queue and what is left of its keys. */
  remove(): Promise<void>;
}

const QUEUE = 'bench-grouped';

function relqDriver(conn: Conn): GroupedDriver {
  const open = () => new Queue<Payload>(QUEUE, { connection: { host: conn.host, port: conn.port }, ...RELQ_QUEUE_OPTIONS, groupConcurrency: 1 });
  return {
    async add(jobs, batch) {
      const q = open();
      try {
        for (let i = 0; i < jobs.length; i += batch) await q.addBulk(jobs.slice(i, i + batch).map(({ group, data }) => ({ data, opts: { group } })));
      } finally {
        await q.close();
      }
    },
    async consume(concurrency, onDone) {
      const q = open();
      await q.client.ping();
      const w = new Worker<Payload>(q, async () => undefined, { concurrency });
      const sub = w.events.subscribe((e) => {
        if (e.type === 'completed') onDone(e.job.group ?? '');
        else if (e.type === 'error') console.error('relq grouped worker error', e.error);
      });
      return {
        close: async () => {
          await w.close();
          sub.unsubscribe();
          await q.close();
        },
      };
    },
    async remove() {
      const q = open();
      try {
        await q.deleteQueue();
      } finally {
        await q.close();
      }
      // what deleteQueue leaves to expire (the workers' replay records, the queue's tombstone)
      await unlinkMatching(conn, `{relq:${QUEUE}}:*`);
    },
  };
}

function groupmqDriver(conn: Conn): GroupedDriver {
  // groupmq's Queue takes a connection of its own and quits it on close()
  const open = (batch?: number) =>
    new GroupmqQueue<Payload>({ redis: new Redis({ host: conn.host, port: conn.port }), namespace: QUEUE, ...(batch ? { autoBatch: { size: batch } } : {}) });
  return {
    async add(jobs, batch) {
      // groupmq has no bulk add: its autoBatch sends each `batch` adds made at once in one script call
      const q = open(batch);
      try {
        for (let i = 0; i < jobs.length; i += batch) await Promise.all(jobs.slice(i, i + batch).map(({ group, data }) => q.add({ groupId: group, data })));
      } finally {
        await q.close();
      }
    },
    async consume(concurrency, onDone) {
      const q = open();
      await q.redis.ping();
      // the Worker starts at once (its constructor calls run())
      const w = new GroupmqWorker<Payload>({ queue: q, handler: async () => undefined, concurrency });
      w.on('completed', (job) => onDone(job.groupId));
      w.on('error', (err) => console.error('groupmq worker error', err));
      return {
        close: async () => {
          await w.close();
          await q.close();
        },
      };
    },
    // no call of groupmq's removes a queue
    remove: () => unlinkMatching(conn, `groupmq:${QUEUE}:*`),
  };
}

/** Unlinks the keys that match `pattern` (SCAN is fine on the bench's own server). */
async function unlinkMatching(conn: Conn, pattern: string): Promise<void> {
  const r = new Redis({ host: conn.host, port: conn.port });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await r.quit();
  }
}

export const GROUPED_DRIVERS: Record<GroupedLib, (conn: Conn) => GroupedDriver> = { relq: relqDriver, groupmq: groupmqDriver };

export const isGroupedLib = (name: LibName): name is GroupedLib => name in GROUPED_DRIVERS;
