import type { AddResult, JobOptions } from '../adds/types.js';
import { MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, ConnectionError, ValidationError } from '../errors.js';
import { EventHub } from '../events/event-hub.js';
import { internalsOf, registerInternals } from '../queue/internals.js';
import { Queue } from '../queue/queue.js';
import { closeClient, openConnection, type ClientHandle, type RedisClient } from '../redis/connection.js';
import { wrapRedisError } from '../redis/redis-errors.js';
import { Registration } from '../registry/registry.js';
import { assertInt, assertOptions } from '../validate.js';
import { cancelNotices, type CancelNotice } from '../worker/cancel-notices.js';
import { partitionMapKey, partitionOfKey } from './layout.js';
import { mapCheck, type MapCheck } from './map-check.js';
import { resolvePartitionedOptions } from './options.js';
import { rateLimitShare, shareOf } from './shares.js';
import { withRetentionShares } from './retention-shares.js';
import { partitionInternalsOf, type PartitionInternals } from './partition-internals.js';
import { PARTITION, type PartitionQueueOptions } from './partition-option.js';
import { PartitionedAdmin } from './partitioned-admin.js';
import { PartitionedInternals } from './partitioned-internals.js';
import { Router, routingKey, withoutPartitionKey } from './routing.js';
import { Turns } from './turns.js';
import type { PartitionedBulkJob, PartitionedJobOptions, PartitionedQueueOptions } from './types.js';
import { PartitionWaits, partitionWakes } from './wake-ups.js';

/**
 * One logical queue made of N relq queues, each with a Redis Cluster slot of its own, so that
 * one hot queue spreads over the Cluster's masters (docs/scale-out.md). Inside a partition
 * every guarantee of a queue holds; a job's partition is picked by its group, `partitionKey`,
 * `jobId` or deduplication id (the same key, the same partition, so their order and
 * idempotency hold), else spread. Producing is here, reading and managing the queue in
 * PartitionedAdmin (partitioned-admin.ts); a Worker or BatchWorker given this object leases
 * from every partition (partitioned-internals.ts).
 */
export class PartitionedQueue<Data = unknown, Result = unknown> extends PartitionedAdmin<Data, Result> {
  readonly prefix: string;
  readonly #handle: ClientHandle;
  readonly #queues: ReadonlyArray<Queue<Data, Result>>;
  readonly #partitionCalls: readonly PartitionInternals[];
  readonly #checkMap: MapCheck;
  readonly #wakes: EventHub<number>;
  readonly #cancels: EventHub<CancelNotice>;
  readonly #router: Router;
  readonly #registration: Registration;
  #closed = false;

  constructor(name: string, options: PartitionedQueueOptions) {
    const { partitions, queueOptions, resolved } = resolvePartitionedOptions(name, options); // everything checked before anything connects
    const handle = openConnection(queueOptions.connection);
    const queues: Array<Queue<Data, Result>> = [];
    for (let i = 0; i < partitions; i += 1) {
      const o: PartitionQueueOptions = { ...queueOptions, connection: handle.client, [PARTITION]: { index: i, of: partitions } };
      if (queueOptions.globalConcurrency !== undefined) o.globalConcurrency = shareOf(queueOptions.globalConcurrency, partitions, i);
      if (queueOptions.limiter !== undefined) o.limiter = rateLimitShare(queueOptions.limiter, partitions, i);
      if (queueOptions.defaults !== undefined) o.defaults = withRetentionShares(queueOptions.defaults, partitions, i);
      queues.push(new Queue<Data, Result>(name, o));
    }
    const calls = queues.map((q) => partitionInternalsOf(q)!);
    const registration = new Registration(name, queues[0]!.prefix, (script, keys, args) => calls[0]!.runOwnKeys(script, keys, args), resolved.warn, partitions);
    const checkMap = mapCheck(calls[0]!, queues[0]!.prefix, name, partitions, () => registration.before());
    super({ name, partitions, queues, calls, checkMap });
    this.#handle = handle;
    this.#queues = queues;
    this.#partitionCalls = calls;
    this.#checkMap = checkMap;
    this.#registration = registration;
    this.prefix = queues[0]!.prefix;
    // Workers: one subscription to every partition's wake-ups, and the turns they lease by.
    const warn = (message: string) => resolved.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message });
    const tags = queues.map((q) => q.keys.tag);
    const wrap = (err: unknown) => wrapRedisError(err, 'events', handle);
    this.#wakes = new EventHub(handle, partitionWakes(tags), name, wrap, warn);
    this.#cancels = new EventHub(handle, cancelNotices(queues.map((q) => q.keys.derived.cancels)), name, wrap, warn);
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

  /** The partition a job with these options goes to when its key decides (undefined: it would be spread). */
  partitionOf(opts: Pick<PartitionedJobOptions, 'group' | 'partitionKey' | 'jobId' | 'deduplication'>): number | undefined {
    withoutPartitionKey(opts, 'opts');
    const key = routingKey(opts);
    return key === undefined ? undefined : partitionOfKey(key, this.partitions);
  }

  /**
   * Removes every key of every partition (Queue.deleteQueue), then the queue's map (a later
   * object may declare another number of partitions) and its entry in listQueues(). Returns
   * the number of keys removed.
   */
  async deleteQueue(opts: { tombstoneMs?: number } = {}): Promise<number> {
    await this.#checkMap();
    const removed = await Promise.all(this.#queues.map((q) => q.deleteQueue(opts)));
    const map = await this.#handle.client.del(partitionMapKey(this.prefix, this.name)).catch((err: unknown) => {
      throw wrapRedisError(err, 'deleteQueue', this.#handle);
    });
    await this.#registration.remove().catch((err: unknown) => {
      throw wrapRedisError(err, 'deleteQueue', this.#handle);
    });
    return removed.reduce((a, b) => a + b, map);
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

  /** The Redis client this object's partitions share (the one passed in, or the one relq opened). */
  get client(): RedisClient {
    return this.#handle.client;
  }

  async #addOne(data: Data, opts: PartitionedJobOptions | undefined, mode: 'wait' | 'try'): Promise<AddResult> {
    const i = this.#router.partitionOf(opts);
    const rest = this.#partitionOptions(opts, 'opts', i);
    const q = this.#queues[i]!;
    if (!this.#checkMap.passed) await this.#checkMap();
    try {
      return await (mode === 'try' ? q.tryAdd(data, rest) : q.add(data, rest));
    } catch (err) {
      if (isUnreachable(err)) this.#router.failed(i);
      throw err;
    }
  }

  /** A job's options as partition `i` takes them: no partitionKey, retention counts in shares. */
  #partitionOptions(opts: PartitionedJobOptions | undefined, field: string, i: number): JobOptions | undefined {
    const rest = withoutPartitionKey(opts, field);
    return rest === undefined ? rest : withRetentionShares(rest, this.partitions, i);
  }

  async #addMany(jobs: ReadonlyArray<PartitionedBulkJob<Data>>, mode: 'wait' | 'try', waitMs: number | undefined): Promise<AddResult[]> {
    const call = mode === 'try' ? 'tryAddBulk' : 'addBulk';
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', `${call} expects an array of { data, opts }`);
    if (this.#closed) throw new ClosedError(`queue '${this.name}'`);
    // Split by partition, keeping each job's place in the caller's list.
    const parts = this.#queues.map(() => ({ jobs: [] as PartitionedBulkJob<Data>[], at: [] as number[] }));
    jobs.forEach((job, i) => {
      const opts = job !== null && typeof job === 'object' ? job.opts : undefined;
      const k = this.#router.partitionOf(opts);
      const rest = this.#partitionOptions(opts, `jobs[${i}].opts`, k);
      const part = parts[k]!;
      part.jobs.push(rest === opts ? job : { ...job, opts: rest });
      part.at.push(i);
    });
    // Every part checked before any is sent: a bad job writes nothing anywhere.
    const prepared = parts.map((p, k) => (p.jobs.length === 0 ? undefined : this.#partitionCalls[k]!.prepareAdd(p.jobs, mode, waitMs, (i) => p.at[i]!)));
    if (!this.#checkMap.passed) await this.#checkMap();
    const results: AddResult[] = new Array<AddResult>(jobs.length);
    await Promise.all(
      prepared.map(async (p, k) => {
        if (!p) return;
        const done = await this.#partitionCalls[k]!.sendAdd(p, mode).catch((err: unknown) => {
          if (isUnreachable(err)) this.#router.failed(k);
          throw err;
        });
        done.forEach((r, j) => (results[parts[k]!.at[j]!] = r));
      }),
    );
    return results;
  }
}

/** An add's failure that says the partition's master did not answer, not that the add was refused. */
function isUnreachable(err: unknown): boolean {
  return err instanceof ConnectionError;
}
