import type { PreparedAdd } from '../adds/producer.js';
import type { AddResult, JobOptions } from '../adds/types.js';
import { MAX_TIMER_MS } from '../defaults.js';
import { ClosedError, ConnectionError, ValidationError } from '../errors.js';
import { EventHub } from '../events/event-hub.js';
import type { SweepResult } from '../management/read-types.js';
import { registerInternals } from '../queue/internals.js';
import { Queue } from '../queue/queue.js';
import { closeClient, openConnection, type ClientHandle, type RedisClient } from '../redis/connection.js';
import { wrapRedisError } from '../redis/redis-errors.js';
import { Registration } from '../registry/registry.js';
import { assertInt, assertOptions } from '../validate.js';
import { cancelNotices, type CancelNotice } from '../worker/cancel-notices.js';
import { PartitionMovedError } from './errors.js';
import { bucketOf, partitionMapKey, type PartitionLayout } from './layout.js';
import { mapCheck, type MapCheck } from './map-check.js';
import { resolvePartitionedOptions } from './options.js';
import { BUCKET, PARTITION, type PartitionQueueOptions } from './partition-option.js';
import { PartitionSet } from './partition-set.js';
import { PartitionedAdmin } from './partitioned-admin.js';
import { PartitionedInternals } from './partitioned-internals.js';
import { handoverStep, startResize, type ResizeParts } from './resize.js';
import { withRetentionShares } from './retention-shares.js';
import { orderKey, Router, routingKey, withoutPartitionKey } from './routing.js';
import { rateLimitShare, shareOf } from './shares.js';
import { Turns } from './turns.js';
import type { PartitionedBulkJob, PartitionedJobOptions, PartitionedQueueOptions, ResizeResult } from './types.js';
import { PartitionWaits, partitionWakes } from './wake-ups.js';

/** An add refused by a partition that a resize moved keys from is routed anew this many times at most (each after reading the map). */
const MOVED_TRIES = 3;
/** How long resize() waits for its handover by default, and between two steps of it. */
const RESIZE_WAIT_MS = 30_000;
const HANDOVER_STEP_MS = 250;

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
  readonly #set: PartitionSet<Data, Result>;
  readonly #checkMap: MapCheck;
  readonly #wakes: EventHub<number>;
  readonly #cancels: EventHub<CancelNotice>;
  readonly #router: Router;
  readonly #registration: Registration;
  readonly #resize: ResizeParts<Data, Result>;
  #closed = false;

  constructor(name: string, options: PartitionedQueueOptions) {
    const { partitions, queueOptions, resolved } = resolvePartitionedOptions(name, options); // everything checked before anything connects
    const handle = openConnection(queueOptions.connection);
    const open = (i: number, layout: PartitionLayout): Queue<Data, Result> => {
      const o: PartitionQueueOptions = { ...queueOptions, connection: handle.client, [PARTITION]: { index: i, of: layout.sizeOf(i) } };
      if (queueOptions.globalConcurrency !== undefined) o.globalConcurrency = shareOf(queueOptions.globalConcurrency, layout.n, i);
      if (queueOptions.limiter !== undefined) o.limiter = rateLimitShare(queueOptions.limiter, layout.n, i);
      if (queueOptions.defaults !== undefined) o.defaults = withRetentionShares(queueOptions.defaults, layout.n, i);
      return new Queue<Data, Result>(name, o);
    };
    const set = new PartitionSet<Data, Result>(open, partitions);
    const prefix = set.queues[0]!.prefix;
    const registration = new Registration(name, prefix, (script, keys, args) => set.calls[0]!.runOwnKeys(script, keys, args), resolved.warn, partitions);
    const shares = queueOptions.globalConcurrency !== undefined || queueOptions.limiter !== undefined;
    const checkMap = mapCheck(set, prefix, name, partitions, shares, () => {
      registration.setPartitions(set.n);
      return registration.before();
    });
    super({ name, set, checkMap });
    this.#handle = handle;
    this.#set = set;
    this.#checkMap = checkMap;
    this.#registration = registration;
    this.prefix = prefix;
    this.#resize = {
      name,
      set,
      checkMap,
      runOnMap: (script, args) => set.calls[0]!.runOwnKeys(script, [partitionMapKey(prefix, name)], args),
      open,
      relist: async () => {
        registration.setPartitions(set.n);
        await registration.before();
      },
      hasShares: async () => {
        if (shares) return true;
        const state = await set.queues[0]!.queueState();
        return state.globalConcurrency > 0 || (state.limiter?.max ?? 0) > 0;
      },
    };
    // Workers: one subscription to every partition's wake-ups, and the turns they lease by.
    const warn = (message: string) => resolved.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message });
    const wrap = (err: unknown) => wrapRedisError(err, 'events', handle);
    this.#wakes = new EventHub(handle, partitionWakes(() => set.queues.map((q) => q.keys.tag)), name, wrap, warn);
    this.#cancels = new EventHub(handle, cancelNotices(() => set.queues.map((q) => q.keys.derived.cancels)), name, wrap, warn);
    const turns = new Turns(partitions);
    const mapChanged = () => void checkMap.refresh().catch(() => undefined); // read again by the next call that needs it
    const internals = new PartitionedInternals<Data>(
      set.parts,
      turns,
      new PartitionWaits(this.#wakes, turns, mapChanged),
      this.#cancels,
      () => this.#closed,
      (key) => set.layout.partitionOfKey(key),
      () => this.#handoverIfHeld(),
      checkMap,
    );
    registerInternals(this, internals);
    this.#router = new Router(set.layout, async () => (await Promise.all(set.queues.map((q) => q.counts()))).map((c) => c.pending));
    set.onChange((change) => {
      this.#router.setLayout(set.layout, set.hold);
      if (!change.partitions) return;
      turns.grow(set.n);
      this.#wakes.resubscribe();
      this.#cancels.resubscribe();
    });
  }

  /**
   * Grows the queue to `partitions` partitions, live (docs/scale-out.md "Changing the number
   * of partitions"): the new partitions take their even share of the keys from the old ones,
   * and lease once the old ones hold no unfinished job of the keys they gave (each key's jobs
   * keep their order); meanwhile the moved keys' new jobs wait in them. Resolves once that
   * handover has ended, or after `waitMs` (30 s by default) with `handedOver: false`: then
   * sweep() (the Nest sweeper's) carries it on. Every object of the queue follows the map.
   */
  async resize(partitions: number, opts: { waitMs?: number } = {}): Promise<ResizeResult> {
    assertOptions('resize options', opts, ['waitMs']);
    if (opts.waitMs !== undefined) assertInt('waitMs', opts.waitMs, { max: MAX_TIMER_MS });
    if (this.#closed) throw new ClosedError(`queue '${this.name}'`);
    const epoch = await startResize(this.#resize, partitions);
    const deadline = Date.now() + (opts.waitMs ?? RESIZE_WAIT_MS);
    for (;;) {
      if (await handoverStep(this.#resize)) return { partitions: this.partitions, epoch, handedOver: true };
      const left = deadline - Date.now();
      if (left <= 0) return { partitions: this.partitions, epoch, handedOver: false };
      await new Promise((resolve) => setTimeout(resolve, Math.min(HANDOVER_STEP_MS, left)));
    }
  }

  /** A queue's sweep() on every partition at once, added up; during a resize's handover, one step of it. */
  override async sweep(opts: { limit?: number } = {}): Promise<SweepResult> {
    const result = await super.sweep(opts);
    await this.#handoverIfHeld();
    return result;
  }

  /** One step of a resize's handover when the map (read again if over a second old) says one is under way. */
  async #handoverIfHeld(): Promise<void> {
    await this.#checkMap.fresh();
    if (this.#set.hold) await handoverStep(this.#resize);
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
    return key === undefined ? undefined : this.#set.layout.partitionOfKey(key);
  }

  /**
   * Removes every key of every partition (Queue.deleteQueue), then the queue's map (a later
   * object may declare another number of partitions) and its entry in listQueues(). Returns
   * the number of keys removed.
   */
  async deleteQueue(opts: { tombstoneMs?: number } = {}): Promise<number> {
    await this.#checkMap();
    const removed = await Promise.all(this.#set.queues.map((q) => q.deleteQueue(opts)));
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
    await Promise.all(this.#set.queues.map((q) => q.close()));
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
    withoutPartitionKey(opts, 'opts'); // checked before anything connects
    if (!this.#checkMap.passed) await this.#checkMap();
    const elsewhere = await this.#heldElsewhere(opts);
    if (elsewhere) return elsewhere;
    for (let tries = 0; ; tries += 1) {
      const i = this.#router.partitionOf(opts);
      const q = this.#set.queues[i]!;
      try {
        const rest = this.#partitionOptions(opts, 'opts', i);
        return await (mode === 'try' ? q.tryAdd(data, rest) : q.add(data, rest));
      } catch (err) {
        if (err instanceof PartitionMovedError && tries < MOVED_TRIES) {
          await this.#checkMap.refresh(); // a resize moved keys: route with the map as it is now
          continue;
        }
        if (isUnreachable(err)) this.#router.failed(i);
        throw err;
      }
    }
  }

  /**
   * A job's options as partition `i` takes them: no partitionKey, retention counts in shares,
   * and the bucket of the key that orders it (a resize's handover looks for it).
   */
  #partitionOptions(opts: PartitionedJobOptions | undefined, field: string, i: number): JobOptions | undefined {
    const rest = withoutPartitionKey(opts, field);
    if (rest === undefined) return rest;
    const shared = withRetentionShares(rest, this.partitions, i);
    const key = orderKey(opts);
    return key === undefined ? shared : ({ ...shared, [BUCKET]: bucketOf(key) } as JobOptions);
  }

  async #addMany(jobs: ReadonlyArray<PartitionedBulkJob<Data>>, mode: 'wait' | 'try', waitMs: number | undefined): Promise<AddResult[]> {
    const call = mode === 'try' ? 'tryAddBulk' : 'addBulk';
    if (!Array.isArray(jobs)) throw new ValidationError('jobs', `${call} expects an array of { data, opts }`);
    if (this.#closed) throw new ClosedError(`queue '${this.name}'`);
    const all = jobs.map((_, i) => i);
    // Every part checked before any is sent: a bad job writes nothing anywhere.
    let routed = this.#route(jobs, all, mode, waitMs);
    if (!this.#checkMap.passed) {
      await this.#checkMap();
      routed = this.#route(jobs, all, mode, waitMs); // with the map as it is
    }
    const results: AddResult[] = new Array<AddResult>(jobs.length);
    if (this.#set.layout.sizes.length > 1) {
      const found = await Promise.all(all.map((i) => this.#heldElsewhere(optsOf(jobs[i]))));
      found.forEach((r, i) => r && (results[i] = r));
      if (found.some(Boolean)) routed = this.#route(jobs, all.filter((i) => !found[i]), mode, waitMs);
    }
    for (let tries = 0; ; tries += 1) {
      const moved: number[] = [];
      await Promise.all(
        routed.map(async (r) => {
          try {
            const done = await this.#set.calls[r.partition]!.sendAdd(r.prepared, mode);
            done.forEach((res, j) => (results[r.at[j]!] = res));
          } catch (err) {
            if (err instanceof PartitionMovedError && tries < MOVED_TRIES) {
              moved.push(...r.at); // nothing of this part was written
              return;
            }
            if (isUnreachable(err)) this.#router.failed(r.partition);
            throw err;
          }
        }),
      );
      if (moved.length === 0) return results;
      await this.#checkMap.refresh();
      routed = this.#route(jobs, moved.sort((a, b) => a - b), mode, waitMs);
    }
  }

  /**
   * A job of a chosen id that a partition its key left in a resize still holds: not added
   * again (an idempotency key holds across a resize; docs/scale-out.md). One HEXISTS per such
   * partition, only for a chosen id whose key moved.
   */
  async #heldElsewhere(opts: PartitionedJobOptions | undefined): Promise<AddResult | undefined> {
    const id = opts?.jobId;
    if (typeof id !== 'string' || this.#set.layout.sizes.length === 1) return undefined;
    for (const p of this.#set.layout.formerOwnersOf(routingKey(opts)!)) {
      if (await this.#set.calls[p]!.hasJob(id)) return { id, created: false };
    }
    return undefined;
  }

  /** The jobs at `indices` split by partition, each part checked and encoded (keeping each job's place in the caller's list). */
  #route(jobs: ReadonlyArray<PartitionedBulkJob<Data>>, indices: readonly number[], mode: 'wait' | 'try', waitMs: number | undefined): Routed[] {
    const parts = new Map<number, { jobs: Array<PartitionedBulkJob<Data>>; at: number[] }>();
    for (const i of indices) {
      const job = jobs[i]!;
      const opts = optsOf(job);
      const k = this.#router.partitionOf(opts);
      const rest = this.#partitionOptions(opts, `jobs[${i}].opts`, k);
      let part = parts.get(k);
      if (!part) parts.set(k, (part = { jobs: [], at: [] }));
      part.jobs.push(rest === opts ? job : { ...job, opts: rest });
      part.at.push(i);
    }
    return [...parts].map(([k, p]) => ({ partition: k, at: p.at, prepared: this.#set.calls[k]!.prepareAdd(p.jobs, mode, waitMs, (j) => p.at[j]!) }));
  }
}

/** A bulk job's options, if it is an object (a bad one is refused by the partition's checks). */
function optsOf<Data>(job: PartitionedBulkJob<Data> | undefined): PartitionedJobOptions | undefined {
  return job !== null && typeof job === 'object' ? job.opts : undefined;
}

/** One part of a bulk add: its partition, its jobs' places in the caller's list, the jobs checked and encoded. */
interface Routed {
  readonly partition: number;
  readonly at: number[];
  readonly prepared: PreparedAdd;
}

/** An add's failure that says the partition's master did not answer, not that the add was refused. */
function isUnreachable(err: unknown): boolean {
  return err instanceof ConnectionError;
}
