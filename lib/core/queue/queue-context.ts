import { boundedCall, closeClient, duplicateClient, openConnection, type ClientHandle } from '../redis/connection.js';
import { afterLoading } from '../redis/loading.js';
import { ClosedError, NotReplicatedError, type RelqError } from '../errors.js';
import { BlockerPool, type Blocker } from '../redis/blocking-wait.js';
import { keysOfTag, queueKeys, queueNameOf, type QueueKeys } from '../redis/keys.js';
import { partitionTag } from '../partitions/layout.js';
import type { PartitionSlot } from '../partitions/partition-option.js';
import { wrapRedisError } from '../redis/redis-errors.js';
import { waitForReplicas } from '../redis/replication.js';
import type { QueueOp, ScriptName, ScriptOp } from '../redis/script-code.js';
import type { AddFlag, EventsFlag, OwnKeysScript, QueueScript, ScriptArg } from '../redis/script-def.js';
import { runScript } from '../redis/scripts.js';
import { checkEvictionPolicy } from '../redis/server-check.js';
import type { JobPolicy } from '../adds/types.js';
import type { DurabilityOptions, EvictionCheck, QueueOptions } from './types.js';
import type { WarningHandler } from '../warnings.js';
import type { ResolvedQueueOptions } from './options.js';
import { isDeletedReply, Registration } from '../registry/registry.js';
import type { SettingsContext } from '../settings/settings-context.js';

/** Ghost ids are reported at most this often per queue (the count adds up meanwhile). */
const GHOST_WARNING_EVERY_MS = 10_000;

/**
 * What every part of one Queue object shares: its name, keys and options, the connection,
 * the one way to run a script (server check, call deadline, typed errors), replication waits,
 * the blocking connections, and whether the object is closed.
 */
export class QueueContext implements SettingsContext {
  readonly keys: QueueKeys;
  readonly prefix: string;
  readonly defaults: Readonly<JobPolicy>;
  readonly maxPayloadBytes: number;
  readonly maxLogLines: number;
  readonly eventsFlag: '0' | '1';
  readonly warn: WarningHandler;
  readonly handle: ClientHandle;
  readonly blockers: BlockerPool;
  /**
   * A partition's adds carry the epoch of the queue's map its PartitionedQueue routes with
   * (partitions/epoch-fence.lua); set by that object, 0 for a queue of its own (nothing sent).
   */
  mapEpoch = 0;
  /** What the job ids this object makes start with: a partition's number and a dot, else nothing. */
  readonly idPrefix: string;
  /**
   * The queue's entry in the registry of queue names (lib/core/registry/registry.ts). A
   * partition has none: the partitioned queue is listed as a whole, not its partitions.
   */
  private readonly registration: Registration | undefined;
  /** The registrations of other queues that flows added through this one wrote to. */
  private readonly others = new Map<string, Registration>();
  /** Where runScript reports a function library that holds other code (once per check). */
  private readonly reportLibrary: (message: string) => void;
  private readonly evictionCheck: EvictionCheck;
  private readonly durability: DurabilityOptions | undefined;
  private closed = false;
  /** The server check of the first call: pending, passed (true), or failed for good. */
  private serverChecked: Promise<void> | true | undefined;
  private ghostsUnreported = 0;
  private ghostWarnedAt = -Infinity;

  constructor(
    readonly name: string,
    o: ResolvedQueueOptions,
    connection: QueueOptions['connection'],
    /** A partition of the partitioned queue `name` (lib/core/partitions/), not a queue of its own. */
    readonly partition?: PartitionSlot,
  ) {
    this.prefix = o.prefix;
    this.keys = partition === undefined ? queueKeys(o.prefix, name) : keysOfTag(partitionTag(o.prefix, name, partition.index, partition.of));
    this.idPrefix = partition === undefined ? '' : `${partition.index}.`;
    this.defaults = o.defaults;
    this.maxPayloadBytes = o.maxPayloadBytes;
    this.maxLogLines = o.maxLogLines;
    this.eventsFlag = o.eventsFlag;
    this.warn = o.warn;
    this.evictionCheck = o.evictionCheck;
    this.durability = o.durability;
    this.handle = openConnection(connection);
    this.blockers = new BlockerPool(() => duplicateClient(this.handle));
    this.reportLibrary = (message) => this.warn({ code: 'RELQ_LIBRARY_MISMATCH', queue: name, message: `queue '${name}': ${message}` });
    this.registration = partition === undefined ? this.newRegistration(name) : undefined;
  }

  /** The name of a flow child's parent's queue: this one, or the queue of tag `pq` (record meta pq). */
  readonly parentQueueOf = (pq: string | undefined): string => (pq === undefined ? this.name : queueNameOf(this.prefix, pq));

  private newRegistration(name: string): Registration {
    return new Registration(
      name,
      this.prefix,
      (script, keys, args) => boundedCall(this.handle, runScript(this.handle.client, script.name, keys, script.encode(args), this.reportLibrary)),
      this.warn,
    );
  }

  /**
   * Lists another queue of the prefix whose keys a call of this one is about to create (a
   * flow across queues, lib/core/flows/flows.ts), as that queue's own first write would.
   */
  registerOther(name: string): Promise<void> | undefined {
    let r = this.others.get(name);
    if (!r) this.others.set(name, (r = this.newRegistration(name)));
    return r.before();
  }

  /** Unlists another queue registered by registerOther() whose tombstone refused the call. */
  async withdrawOther(name: string): Promise<void> {
    await this.others.get(name)?.withdraw();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  assertOpen(): void {
    if (this.closed) throw new ClosedError(`queue '${this.name}'`);
  }

  /**
   * One operation on this queue: its named arguments encoded, the queue keys (+ its extra
   * keys), typed errors labelled `op` (the definition's first label unless given), a deadline
   * where the client has none, sent again while a restarted server is still loading its
   * data; its reply decoded.
   */
  addFlag(events: EventsFlag): AddFlag {
    return this.mapEpoch === 0 ? events : `${events}:${this.mapEpoch}`;
  }

  async run<Args, Result, Op extends string>(script: QueueScript<ScriptName, Args, Result, Op>, args: Args, op: Op = script.ops[0]): Promise<Result> {
    this.assertOpen();
    const argv = script.encode(args);
    const keys = script.extraKeysOf ? [...this.keys.call, ...script.extraKeysOf(this.keys, args)] : this.keys.call;
    let reply: unknown;
    try {
      reply = await this.send(script, keys, argv);
    } catch (err) {
      try {
        reply = await afterLoading(this.handle, err, () => this.send(script, keys, argv));
      } catch (last) {
        throw wrapRedisError(last, op, this.handle);
      }
    }
    return script.decode(reply, args);
  }

  private async send(script: QueueScript<ScriptName, never, unknown, string>, keys: readonly string[], argv: ScriptArg[]): Promise<unknown> {
    if (this.serverChecked !== true) await this.checkServer();
    // no await otherwise: leases and settles pay no tick
    const registering = script.creates ? this.registration?.before() : undefined;
    if (registering) await registering;
    const reply = await boundedCall(this.handle, runScript(this.handle.client, script.name, keys, argv, this.reportLibrary));
    // Listed for a call that the deleted queue's tombstone refused: not listed after all.
    if (registering && isDeletedReply(reply)) await this.registration?.withdraw();
    return reply;
  }

  /**
   * An operation on keys of its own rather than the queue's (a partitioned queue's map): the
   * same deadline and typed errors as run().
   */
  async runOwnKeys<Args, Result, Op extends ScriptOp>(script: OwnKeysScript<ScriptName, Args, Result, Op>, keys: string[], args: Args): Promise<Result> {
    this.assertOpen();
    if (this.serverChecked !== true) await this.checkServer();
    try {
      const reply = await boundedCall(this.handle, runScript(this.handle.client, script.name, keys, script.encode(args), this.reportLibrary));
      return script.decode(reply, args);
    } catch (err) {
      throw wrapRedisError(err, script.ops[0], this.handle);
    }
  }

  /** Removes the queue from the registry of queue names, after deleteQueue's script. */
  async unregister(): Promise<void> {
    try {
      await this.registration?.remove();
    } catch (err) {
      throw this.wrapError(err, 'deleteQueue');
    }
  }

  wrapError(err: unknown, op: QueueOp): RelqError {
    return wrapRedisError(err, op, this.handle);
  }

  openBlocker(): Blocker {
    return this.blockers.open();
  }

  closeBlocker(b: Blocker): void {
    this.blockers.close(b);
  }

  /**
   * With `durability`: waits until enough replicas have this connection's writes (WAIT), and
   * throws NotReplicatedError carrying `result` when they do not confirm them in time.
   */
  async replicated<T>(op: string, result: T): Promise<T> {
    if (!this.durability) return result;
    const { replicas, timeoutMs } = this.durability;
    let confirmed = 0;
    try {
      confirmed = await waitForReplicas(this.handle.client, this.keys.byName.jobs, replicas, timeoutMs);
    } catch {
      // applied, replication unknown: reported as not confirmed
    }
    if (confirmed < replicas) throw new NotReplicatedError(op, confirmed, replicas, result);
    return result;
  }

  get waitsForReplicas(): boolean {
    return this.durability !== undefined;
  }

  /** Ghost ids are a sign of eviction: reported, a few at a time. */
  reportGhosts(n: number): void {
    this.ghostsUnreported += n;
    const now = Date.now();
    if (now - this.ghostWarnedAt < GHOST_WARNING_EVERY_MS) return;
    this.ghostWarnedAt = now;
    const message =
      `queue '${this.name}': dropped ${this.ghostsUnreported} queued id(s) whose job record is gone (evicted, or deleted ` +
      "outside relq); counts().ghosts keeps the total. Check that Redis runs with maxmemory-policy noeviction (docs/reliability.md)";
    this.ghostsUnreported = 0;
    this.warn({ code: 'RELQ_GHOST_JOBS', queue: this.name, message });
  }

  /** From now on every call fails with ClosedError. */
  markClosed(): void {
    this.closed = true;
  }

  /** Closes the blocking connections and, if relq opened it, the command connection. */
  async releaseConnections(): Promise<void> {
    this.blockers.closeAll();
    if (this.handle.owned) await closeClient(this.handle.client);
  }

  /** On first use: is the server safe for a queue (lib/core/redis/server-check.ts)? */
  private checkServer(): Promise<void> {
    this.serverChecked ??= checkEvictionPolicy(this.handle.client, this.name, this.evictionCheck, this.warn).then((done) => {
      // Not read yet (not connected, a node away): checked again by the next call.
      this.serverChecked = done ? true : undefined;
    });
    return this.serverChecked as Promise<void>;
  }
}
