import type { AddResult } from '../adds/types.js';
import { MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, ValidationError } from '../errors.js';
import type { JobInfo, QueueCounts, SweepResult } from '../management/read-types.js';
import { EventHub } from '../events/event-hub.js';
import { internalsOf, registerInternals } from '../queue/internals.js';
import { wrapRedisError } from '../redis/redis-errors.js';
import { partitionInternalsOf, type PartitionInternals } from './partition-internals.js';
import { PartitionedInternals } from './partitioned-internals.js';
import { Turns } from './turns.js';
import { cancelNotices, type CancelNotice } from '../worker/cancel-notices.js';
import { PartitionWaits, partitionWakes } from './wake-ups.js';
import { Queue } from '../queue/queue.js';
import { closeClient, openConnection, type ClientHandle } from '../redis/connection.js';
import { assertInt, assertJobId, assertOptions } from '../validate.js';
import { PartitionsMismatchError } from './errors.js';
import { partitionMapKey, partitionOfGeneratedId, partitionOfKey } from './layout.js';
import { mergeCounts, mergeSweeps } from './merge.js';
import { PARTITION, type PartitionQueueOptions } from './partition-option.js';
import { resolvePartitionedOptions } from './options.js';
import { Router, routingKey, withoutPartitionKey } from './routing.js';
import { partitionMapScript } from './scripts.js';
import type { PartitionedBulkJob, PartitionedJobOptions, PartitionedQueueOptions } from './types.js';

/**
 * One logical queue made of N relq queues, each with a Redis Cluster slot of its own, so that
 * one hot queue spreads over the Cluster's masters (docs/scale-out.md). Inside a partition
 * every guarantee of a queue holds; a job's partition is picked by its group, `partitionKey`,
 * `jobId` or deduplication id (the same key, the same partition, so their order and
 * idempotency hold), else spread. Producing and reading are here; a Worker or BatchWorker
 * given this object leases from every partition (partitioned-internals.ts).
 */
export class PartitionedQueue<Data = unknown, Result = unknown> {
  readonly name: string;
  readonly prefix: string;
  /** The number of partitions. */
  readonly partitions: number;
  readonly #handle: ClientHandle;
  readonly #queues: ReadonlyArray<Queue<Data, Result>>;
  readonly #partitionCalls: readonly PartitionInternals[];
  readonly #wakes: EventHub<number>;
  readonly #cancels: EventHub<CancelNotice>;
  readonly #router: Router;
  /** The map's check: pending, or passed (true). A failure is thrown to the call and checked again by the next. */
  #mapChecked: Promise<void> | true | undefined;
  #closed = false;

  constructor(name: string, options: PartitionedQueueOptions) {
    const { partitions, queueOptions, resolved } = resolvePartitionedOptions(name, options); // everything checked before anything connects
    this.name = name;
    this.partitions = partitions;
    this.#handle = openConnection(queueOptions.connection);
    const queues: Array<Queue<Data, Result>> = [];
    for (let i = 0; i < partitions; i += 1) {
      const o: PartitionQueueOptions = { ...queueOptions, connection: this.#handle.client, [PARTITION]: { index: i, of: partitions } };
      queues.push(new Queue<Data, Result>(name, o));
    }
    this.#queues = queues;
    this.prefix = queues[0]!.prefix;
    this.#partitionCalls = queues.map((q) => partitionInternalsOf(q)!);
    // Workers: one subscription to every partition's wake-ups, and the turns they lease by.
    const warn = (message: string) => resolved.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message });
    const tags = queues.map((q) => q.keys.tag);
    const wrap = (err: unknown) => wrapRedisError(err, 'events', this.#handle);
    this.#wakes = new EventHub(this.#handle, partitionWakes(tags), name, wrap, warn);
    this.#cancels = new EventHub(this.#handle, cancelNotices(queues.map((q) => q.keys.derived.cancels)), name, wrap, warn);
    const turns = new Turns(partitions);
    const parts = queues.map((q) => internalsOf<Data>(q)!);
    registerInternals(this, new PartitionedInternals<Data>(parts, turns, new PartitionWaits(this.#wakes, turns), this.#cancels, () => this.#closed));
    this.#router = new Router(partitions, async () => (await Promise.all(queues.map((q) => q.counts()))).map((c) => c.pending));
  }

  /** Adds one job to its partition. With a `jobId` that exists there, nothing is written and `created` is false. */
  async add(data: Data, opts?: PartitionedJobOptions): Promise<AddResult> {
    return this.#addOne(data, opts, 'wait');
  }

  /** add() that never waits for room in a partition (QueueFullError). */
  async tryAdd(data: Data, opts?: PartitionedJobOptions): Promise<AddResult> {
    return this.#addOne(data, opts, 'try');
  }

  /**
   * Adds many jobs: split by partition, every job checked before any part is sent, the parts
   * sent at once. Each part is atomic, the whole is not: a part that fails leaves the others
   * added (their results are lost with the error; adding them again with the same jobIds is safe).
   */
  async addBulk(jobs: ReadonlyArray<PartitionedBulkJob<Data>>, opts: { waitMs?: number } = {}): Promise<AddResult[]> {
    assertOptions('addBulk options', opts, ['waitMs']);
    if (opts.waitMs !== undefined) assertInt('waitMs', opts.waitMs, { max: MAX_TIMER_MS });
    return this.#addMany(jobs, 'wait', opts.waitMs);
  }

  /** addBulk() that never waits for room. */
  async tryAddBulk(jobs: ReadonlyArray<PartitionedBulkJob<Data>>): Promise<AddResult[]> {
    return this.#addMany(jobs, 'try', undefined);
  }

  /**
   * The job, from the partition its id names: a generated id starts with its partition; a
   * jobId a caller chose is looked for in the partition it routes to, then (a job routed by its
   * group or partitionKey) in the others.
   */
  async getJob(id: string): Promise<JobInfo<Data, Result> | null> {
    assertJobId(id, 'id');
    await this.#checkMap();
    const first = partitionOfGeneratedId(id, this.partitions) ?? partitionOfKey(id, this.partitions);
    const found = await this.#queues[first]!.getJob(id);
    if (found || this.partitions === 1) return found;
    const others = await Promise.all(this.#queues.filter((_, i) => i !== first).map((q) => q.getJob(id)));
    return others.find((j) => j !== null) ?? null;
  }

  /**
   * A queue's sweep() on every partition at once, added up: expired leases back to pending (or
   * dead), due delayed jobs promoted, ended retention cleared, lost wake-ups made up for. Run it
   * as for a queue (docs/reliability.md): a dead worker's jobs come back only through it.
   */
  async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    await this.#checkMap();
    return mergeSweeps(await Promise.all(this.#queues.map((q) => q.sweep(opts))));
  }

  /** The queue's counts: every partition read at once and added up (`paused` when every partition is). */
  async counts(): Promise<QueueCounts> {
    return mergeCounts(await this.countsByPartition());
  }

  /** Each partition's counts, by partition number. */
  async countsByPartition(): Promise<QueueCounts[]> {
    await this.#checkMap();
    return Promise.all(this.#queues.map((q) => q.counts()));
  }

  /** The partition a job with these options goes to when its key decides (undefined: it would be spread). */
  partitionOf(opts: Pick<PartitionedJobOptions, 'group' | 'partitionKey' | 'jobId' | 'deduplication'>): number | undefined {
    withoutPartitionKey(opts, 'opts');
    const key = routingKey(opts);
    return key === undefined ? undefined : partitionOfKey(key, this.partitions);
  }

  /** Closes the connections relq opened; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakes.close();
    this.#cancels.close();
    await Promise.all(this.#queues.map((q) => q.close()));
    if (this.#handle.owned) await closeClient(this.#handle.client);
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  async #addOne(data: Data, opts: PartitionedJobOptions | undefined, mode: 'wait' | 'try'): Promise<AddResult> {
    const rest = withoutPartitionKey(opts, 'opts');
    const q = this.#queues[this.#router.partitionOf(opts)]!;
    if (this.#mapChecked !== true) await this.#checkMap();
    return mode === 'try' ? q.tryAdd(data, rest) : q.add(data, rest);
  }

  async #addMany(jobs: ReadonlyArray<PartitionedBulkJob<Data>>, mode: 'wait' | 'try', waitMs: number | undefined): Promise<AddResult[]> {
    const call = mode === 'try' ? 'tryAddBulk' : 'addBulk';
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', `${call} expects an array of { data, opts }`);
    if (this.#closed) throw new ClosedError(`queue '${this.name}'`);
    // Split by partition, keeping each job's place in the caller's list.
    const parts = this.#queues.map(() => ({ jobs: [] as PartitionedBulkJob<Data>[], at: [] as number[] }));
    jobs.forEach((job, i) => {
      const opts = job !== null && typeof job === 'object' ? job.opts : undefined;
      const rest = withoutPartitionKey(opts, `jobs[${i}].opts`);
      const part = parts[this.#router.partitionOf(opts)]!;
      part.jobs.push(rest === opts ? job : { ...job, opts: rest });
      part.at.push(i);
    });
    // Every part checked before any is sent: a bad job writes nothing anywhere.
    const prepared = parts.map((p, k) => (p.jobs.length === 0 ? undefined : this.#partitionCalls[k]!.prepareAdd(p.jobs, mode, waitMs, (i) => p.at[i]!)));
    if (this.#mapChecked !== true) await this.#checkMap();
    const results: AddResult[] = new Array<AddResult>(jobs.length);
    await Promise.all(
      prepared.map(async (p, k) => {
        if (!p) return;
        const done = await this.#partitionCalls[k]!.sendAdd(p, mode);
        done.forEach((r, j) => (results[parts[k]!.at[j]!] = r));
      }),
    );
    return results;
  }

  /** Once per object: the queue's map holds this object's number of partitions (written by the first object to use the queue). */
  #checkMap(): Promise<void> {
    if (this.#mapChecked === true) return Promise.resolve();
    this.#mapChecked ??= this.#partitionCalls[0]!.runOwnKeys(partitionMapScript, [partitionMapKey(this.prefix, this.name)], { partitions: this.partitions }).then(
      (stored) => {
        if (stored.partitions !== this.partitions) throw new PartitionsMismatchError(this.name, this.partitions, stored.partitions);
        this.#mapChecked = true;
      },
      (err: unknown) => {
        this.#mapChecked = undefined;
        throw err;
      },
    );
    return this.#mapChecked as Promise<void>;
  }
}
