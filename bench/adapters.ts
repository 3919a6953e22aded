/**
 * One adapter per library, each configured as documented in RESULTS.md: library defaults
 * except the settings listed in `settings` (completed jobs are removed at once everywhere).
 */
import BeeQueue from 'bee-queue';
import { Queue as BullQueue, Worker as BullWorker } from 'bullmq';
import { pathToFileURL } from 'node:url';
import * as relqLib from '../lib/index.js';
import { ioredisBatchFloor, ioredisFloor } from './floors.js';
import type { Queue as RelqQueue } from '../lib/index.js';
import type { Payload } from './payload.js';

/**
 * `relq@ref`: relq's lib/ as committed at `--ref`, measured beside the working tree's (tools/run-bench.mjs).
 * `groupmq`: a queue of groups only, measured in the grouped scenario alone (grouped-libs.ts).
 */
export type LibName = 'relq' | 'relq@ref' | 'bullmq' | 'bee-queue' | 'ioredis' | 'ioredis-batch' | 'groupmq';
/** The relq builds a run can measure. */
export type RelqName = 'relq' | 'relq@ref';
export const isRelq = (name: LibName): name is RelqName => name === 'relq' || name === 'relq@ref';
/** The raw-ioredis floors (bench/floors.ts): no queue, so no queue's features to measure. */
export const isFloor = (name: LibName): boolean => name === 'ioredis' || name === 'ioredis-batch';

export interface Conn {
  host: string;
  port: number;
  /** relq only: the queue's name (default QUEUE_NAME); the paired latency run gives each build its own. */
  queue?: string;
}

export interface Producer {
  add(data: Payload): Promise<unknown>;
  addBatch(datas: Payload[]): Promise<unknown>;
  close(): Promise<void>;
}

export interface Hooks {
  /** Called when the handler starts on a job. */
  onStart?(data: Payload): void;
  /** Called once the library reports the job completed (acknowledged in Redis). */
  onDone(): void;
}

export interface Consumer {
  close(): Promise<void>;
}

export interface Adapter {
  name: LibName;
  label: string;
  /** Settings that differ from the library's defaults, and other notes, for RESULTS.md. */
  settings: string[];
  /** A library that adds exactly as this one does (the batch floor: the floor): add and memory figures leave it out. */
  addsLike?: LibName;
  producer(conn: Conn): Promise<Producer>;
  consumer(conn: Conn, concurrency: number, hooks: Hooks): Promise<Consumer>;
  /** relq only: BatchWorker (batch-handler mode) running `batches` at once, or as many lease({count}) + ackBatch loops on engines without it. */
  batchConsumer?(conn: Conn, batchSize: number, batches: number, hooks: Hooks): Promise<Consumer>;
}

export const QUEUE_NAME = 'bench';
/** A relq build's own queue, where both builds of a --ref run hold jobs at once (turns, backlogs). */
export const buildQueueName = (name: RelqName): string => `${QUEUE_NAME}-${name === 'relq' ? 'tree' : 'ref'}`;

/** What the bench uses of a relq build: the working tree's lib/ or the one compiled from `--ref`. */
type RelqLib = Pick<typeof relqLib, 'Queue' | 'Worker'>;

// The engine's batch-handler mode, where the benchmarked lib/ has it (BatchWorker); older
// engines are measured with a lease({ count }) + ackBatch() loop instead.
type BatchWorkerCtor = new (
  queue: RelqQueue<Payload, unknown>,
  handler: (jobs: Array<{ data: Payload }>) => unknown,
  opts: { size: number; concurrency?: number },
) => { events: { subscribe(f: (e: { type: string; error?: unknown }) => void): { unsubscribe(): void } }; close(): Promise<void> };
const batchWorkerOf = (lib: RelqLib) => (lib as unknown as Record<string, unknown>).BatchWorker as BatchWorkerCtor | undefined;
export const RELQ_BATCH_MODE: 'BatchWorker' | 'lease+ackBatch' = batchWorkerOf(relqLib) ? 'BatchWorker' : 'lease+ackBatch';

// ---- relq ------------------------------------------------------------------------

export const RELQ_QUEUE_OPTIONS = { defaults: { keepCompletedMs: 0 } } as const;

/** The relq builds of this run by name: `relq@ref` only after loadRefBuild(). */
export const RELQ_LIBS: Partial<Record<RelqName, RelqLib>> = { relq: relqLib };

async function ready(q: { client: { ping(): Promise<unknown> } }): Promise<void> {
  await q.client.ping();
}

function relqAdapter(name: RelqName, label: string, lib: RelqLib): Adapter {
  const BatchWorker = batchWorkerOf(lib);
  const relqQueue = (conn: Conn): RelqQueue<Payload, unknown> =>
    new lib.Queue<Payload, unknown>(conn.queue ?? QUEUE_NAME, { connection: { host: conn.host, port: conn.port }, ...RELQ_QUEUE_OPTIONS });
  return {
    name,
    label,
    settings: [
      'Queue `defaults: { keepCompletedMs: 0 }` (completed jobs deleted at once; default keeps them 1 h).',
      'Everything else default: `events` on (nothing is published while nobody listens, as in the bench), Worker `leaseMs` 30 s, `blockMs` 5 s, heartbeat on.',
      'Producer and worker use separate `Queue` objects (separate connections), as separate processes would.',
    ],
    async producer(conn) {
      const q = relqQueue(conn);
      await ready(q);
      return {
        add: (d) => q.add(d),
        addBatch: (ds) => q.addBulk(ds.map((data) => ({ data }))),
        close: () => q.close(),
      };
    },
    async consumer(conn, concurrency, hooks) {
      const q = relqQueue(conn);
      await ready(q);
      const onStart = hooks.onStart;
      const w = new lib.Worker<Payload, unknown>(
        q,
        onStart
          ? async (job) => {
              onStart(job.data);
            }
          : async () => undefined,
        { concurrency },
      );
      const sub = w.events.subscribe((e) => {
        if (e.type === 'completed') hooks.onDone();
        else if (e.type === 'error') console.error(`${label} worker error`, e.error);
      });
      return {
        close: async () => {
          await w.close();
          sub.unsubscribe();
          await q.close();
        },
      };
    },
    async batchConsumer(conn, batchSize, batches, hooks) {
      const q = relqQueue(conn);
      await ready(q);
      if (BatchWorker) {
        const onStart = hooks.onStart;
        const handler = async (jobs: Array<{ data: Payload }>) => {
          if (onStart) for (const j of jobs) onStart(j.data);
        };
        let workers: Array<InstanceType<BatchWorkerCtor>>;
        try {
          workers = [new BatchWorker(q, handler, { size: batchSize, concurrency: batches })];
        } catch (error) {
          // An engine whose BatchWorker has no `concurrency` (an old --ref): one worker per batch.
          if (!/unknown option 'concurrency'/.test(String(error))) throw error;
          workers = Array.from({ length: batches }, () => new BatchWorker(q, handler, { size: batchSize }));
        }
        const subs = workers.map((w) =>
          w.events.subscribe((e) => {
            if (e.type === 'completed') hooks.onDone();
            else if (e.type === 'error') console.error(`${label} batch worker error`, e.error);
          }),
        );
        return {
          close: async () => {
            await Promise.all(workers.map((w) => w.close()));
            for (const sub of subs) sub.unsubscribe();
            await q.close();
          },
        };
      }
      let stop = false;
      const loops = Array.from({ length: batches }, async () => {
        while (!stop) {
          const leases = await q.lease({ count: batchSize, blockMs: 200 });
          if (leases.length === 0) continue;
          if (hooks.onStart) for (const l of leases) hooks.onStart(l.job.data);
          const ok = await q.ackBatch(leases);
          for (const x of ok) if (x) hooks.onDone();
        }
      });
      return {
        close: async () => {
          stop = true;
          await Promise.all(loops);
          await q.close();
        },
      };
    },
  };
}

export const relq: Adapter = relqAdapter('relq', 'relq', relqLib);

/** Stands in for `relq@ref` until loadRefBuild() replaces it: a run without --ref cannot measure it. */
const noRefBuild: Adapter = {
  name: 'relq@ref',
  label: 'relq@ref',
  settings: [],
  producer: () => Promise.reject(new Error('relq@ref: run the bench with --ref <git-ref>')),
  consumer: () => Promise.reject(new Error('relq@ref: run the bench with --ref <git-ref>')),
};

/**
 * Loads relq as committed at `--ref` (compiled by tools/run-bench.mjs to `RELQ_BENCH_REF_LIB`)
 * as the library `relq@ref`. Returns its label, or undefined when the run has no --ref.
 */
export async function loadRefBuild(): Promise<string | undefined> {
  const path = process.env.RELQ_BENCH_REF_LIB;
  if (!path) return undefined;
  const lib = (await import(pathToFileURL(path).href)) as RelqLib;
  const label = `relq@${process.env.RELQ_BENCH_REF_SHA ?? 'ref'}`;
  RELQ_LIBS['relq@ref'] = lib;
  ADAPTERS['relq@ref'] = relqAdapter('relq@ref', label, lib);
  return label;
}

// ---- BullMQ ----------------------------------------------------------------------

export const bullmq: Adapter = {
  name: 'bullmq',
  label: 'BullMQ',
  settings: [
    'Queue `defaultJobOptions: { removeOnComplete: true }` (default keeps completed jobs).',
    'Everything else default: events stream on (XADD, maxLen ~10,000), Worker `lockDuration` 30 s, stalled check every 30 s, `drainDelay` 5 s.',
    'Connections created by BullMQ from `{ host, port }` (it sets `maxRetriesPerRequest: null` itself for workers).',
  ],
  async producer(conn) {
    const q = new BullQueue(QUEUE_NAME, {
      connection: { host: conn.host, port: conn.port },
      defaultJobOptions: { removeOnComplete: true },
    });
    await q.waitUntilReady();
    return {
      add: (d) => q.add('job', d),
      addBatch: (ds) => q.addBulk(ds.map((data) => ({ name: 'job', data }))),
      close: () => q.close(),
    };
  },
  async consumer(conn, concurrency, hooks) {
    const onStart = hooks.onStart;
    const w = new BullWorker(
      QUEUE_NAME,
      onStart
        ? async (job) => {
            onStart(job.data as Payload);
            return undefined;
          }
        : async () => undefined,
      { connection: { host: conn.host, port: conn.port }, concurrency },
    );
    w.on('completed', () => hooks.onDone());
    w.on('error', (err) => console.error('bullmq worker error', err));
    await w.waitUntilReady();
    return { close: () => w.close() };
  },
};

// ---- bee-queue -------------------------------------------------------------------

export const beeQueue: Adapter = {
  name: 'bee-queue',
  label: 'bee-queue',
  settings: [
    'Worker `removeOnSuccess: true` (default keeps succeeded jobs).',
    '`getEvents: false` on producer and worker, producer `isWorker: false`, `storeJobs: false` (bee-queue README: disable what you do not need; nothing in the bench listens to events).',
    'Everything else default: `sendEvents` on (one PUBLISH per finished job), `stallInterval` 5 s (bee-queue has no automatic stalled-job sweep unless `checkStalledJobs()` is called; none is).',
  ],
  async producer(conn) {
    const q = new BeeQueue(QUEUE_NAME, {
      redis: { host: conn.host, port: conn.port },
      isWorker: false,
      getEvents: false,
      storeJobs: false,
    });
    await q.ready();
    return {
      add: (d) => q.createJob(d).save(),
      addBatch: (ds) => q.saveAll(ds.map((d) => q.createJob(d))),
      close: () => q.close(),
    };
  },
  async consumer(conn, concurrency, hooks) {
    const q = new BeeQueue(QUEUE_NAME, {
      redis: { host: conn.host, port: conn.port },
      removeOnSuccess: true,
      getEvents: false,
    });
    await q.ready();
    q.on('succeeded', () => hooks.onDone());
    q.on('error', (err) => console.error('bee-queue error', err));
    const onStart = hooks.onStart;
    q.process(
      concurrency,
      onStart
        ? async (job: BeeQueue.Job<Payload>) => {
            onStart(job.data);
          }
        : async () => undefined,
    );
    return { close: () => q.close(10_000) };
  },
};

// ---- groupmq: every job in a group, so only the grouped scenario measures it --------------

const groupedOnly = () => Promise.reject(new Error('groupmq is measured only in the grouped scenario (bench/grouped-libs.ts)'));

export const groupmq: Adapter = {
  name: 'groupmq',
  label: 'groupmq',
  settings: [
    'Measured in the grouped scenario only. Library defaults: `keepCompleted: 0` (completed jobs deleted at once), `jobTimeoutMs` 30 s, one job at a time per group, Worker stalled check every 30 s, scheduler every 1 s, cleanup every 60 s.',
    'Jobs added through a producer `Queue` with `autoBatch: { size: 1000 }` (its batched enqueue script: groupmq has no bulk add), the worker on a `Queue` of its own.',
  ],
  producer: groupedOnly,
  consumer: groupedOnly,
};

export const ADAPTERS: Record<LibName, Adapter> = {
  relq,
  'relq@ref': noRefBuild,
  bullmq,
  'bee-queue': beeQueue,
  ioredis: ioredisFloor,
  'ioredis-batch': ioredisBatchFloor,
  groupmq,
};
