import { DEFAULT_PREFIX } from '../defaults.js';
import { PARTITION_BUCKETS } from '../partitions/layout.js';
import type { RedisClient } from '../redis/connection.js';
import { registryKey, registryPartitionsKey } from '../redis/keys.js';
import { withConnection } from '../redis/one-off.js';
import { isKeyRefused } from '../redis/redis-errors.js';
import type { ConnectionInput } from '../redis/types.js';
import { registerPartitionedScript, registerQueueScript, unregisterPartitionedScript, unregisterQueueScript, type RegistryArgs, type RegistryScript } from './scripts.js';
import { assertOptions, assertPrefix, assertQueueName } from '../validate.js';
import type { WarningHandler } from '../warnings.js';

/**
 * A Queue object registers again before a creating call at most this often, so that a queue
 * deleted by another process and then written again by this one is listed again.
 */
const REFRESH_MS = 60_000;

/**
 * @internal The registry entry of one Queue object's queue (register-queue.lua, unregister-queue.lua). The
 * registry key has its own Cluster slot, so no queue script may write it: this object
 * registers the queue with a call of its own before its first creating call (then at most
 * once a minute), and deleteQueue() unregisters it after the delete script. Adds after the
 * first pay nothing.
 *
 * An ACL user allowed its queue's keys but not the registry's still works: listing is not
 * worth failing a producer for. The refusal counts as a registration (one refused call a
 * minute at most) and is reported once per object; any other failure fails the call.
 */
export class Registration {
  private registeredAt = -Infinity;
  private pending: Promise<void> | undefined;
  private withdrawing: Promise<void> | undefined;
  private refusalReported = false;
  private readonly key: string;
  private readonly keys: string[];
  private readonly register: RegistryScript;
  private readonly unregister: RegistryScript;

  constructor(
    private readonly name: string,
    private readonly prefix: string,
    /** Runs a registry operation on `keys` (the caller bounds and wraps it). */
    private readonly exec: (script: RegistryScript, keys: string[], args: RegistryArgs) => Promise<unknown>,
    private readonly warn: WarningHandler,
    /** A partitioned queue's number of partitions: listed with its name (a resize changes it: setPartitions). */
    private partitions?: number,
  ) {
    this.key = registryKey(prefix);
    const partitioned = partitions !== undefined;
    this.keys = partitioned ? [this.key, registryPartitionsKey(prefix)] : [this.key];
    this.register = partitioned ? registerPartitionedScript : registerQueueScript;
    this.unregister = partitioned ? unregisterPartitionedScript : unregisterQueueScript;
  }

  /** A partitioned queue's number of partitions changed (a resize): listed again with the new one at the next call. */
  setPartitions(partitions: number): void {
    if (this.partitions === undefined || this.partitions === partitions) return;
    this.partitions = partitions;
    this.registeredAt = -Infinity;
  }

  /**
   * What must be awaited before a call that may create the queue's keys (a definition's
   * `creates`, lib/core/redis/script-def.ts): nothing, or the queue's registration.
   */
  before(): Promise<void> | undefined {
    if (Date.now() - this.registeredAt < REFRESH_MS) return undefined;
    this.pending ??= this.exec(this.register, this.keys, this.partitions === undefined ? { name: this.name } : { name: this.name, partitions: this.partitions })
      .catch((err: unknown) => this.refused(err, 'listed in', 'will not show it', 'to list it'))
      .then(() => {
        this.registeredAt = Date.now();
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  /**
   * The call this object registered for was refused because the queue is deleted (its
   * tombstone): listing it would show a queue that does not exist, so it is unlisted again.
   * A failure leaves it listed, as before the call; the caller's error is the refusal's.
   */
  withdraw(): Promise<void> {
    // Calls refused together (they shared one registration) share one unlisting.
    this.withdrawing ??= this.remove()
      .catch(() => undefined)
      .finally(() => (this.withdrawing = undefined));
    return this.withdrawing;
  }

  /** The queue was deleted: unlisted, and registered again by this object's next creating call. */
  async remove(): Promise<void> {
    // A registration in flight would mark the queue registered after this unlisting, and the
    // next creating call would not list it again for a minute: let it settle first.
    await this.pending?.catch(() => undefined);
    this.registeredAt = -Infinity;
    await this.exec(this.unregister, this.keys, { name: this.name }).catch((err: unknown) =>
      this.refused(err, 'removed from', 'may still show it', 'so that deleteQueue() unlists it'),
    );
  }

  /** Rethrows `err` unless the ACL refused the registry key, which is reported instead. */
  private refused(err: unknown, action: string, consequence: string, purpose: string): void {
    if (!isKeyRefused(err)) throw err;
    if (this.refusalReported) return;
    this.refusalReported = true;
    const message =
      `queue '${this.name}' could not be ${action} the registry of queue names because the Redis user may not write ` +
      `${this.keys.join(' and ')}, so listQueues() and \`npx relq queues\` ${consequence}; grant the key pattern ${this.keys.map((k) => `~${k}`).join(' ')} ` +
      `(or ~{${this.prefix}:*) ${purpose}`;
    this.warn({ code: 'RELQ_REGISTRY_NOPERM', queue: this.name, message });
  }
}

/**
 * Whether a creating script's reply is its refusal of a deleted queue (tombstone):
 * `'deleted'` (settings/configure-queue.lua, close-queue.lua, reopen-queue.lua) or `{ 'deleted' }` (produce.lua, add-flow.lua).
 */
export function isDeletedReply(reply: unknown): boolean {
  return reply === 'deleted' || (Array.isArray(reply) && reply.length === 1 && reply[0] === 'deleted');
}

/** One registered queue. */
export interface QueueListing {
  name: string;
  /** When a Queue object first registered it (epoch ms, Redis clock). */
  firstSeen: number;
  /** A partitioned queue's number of partitions (open it as a PartitionedQueue); absent for a queue. */
  partitions?: number;
}

/**
 * The queues of a prefix, by name, without KEYS or SCAN: a queue is listed from the first
 * add (or flow, scheduler, settings, close, pause...) of any Queue object on it until
 * deleteQueue(). One ZRANGE. Closes the connection it opened; a client passed in stays open.
 */
export async function listQueues(connection?: ConnectionInput, opts: { prefix?: string } = {}): Promise<QueueListing[]> {
  const [flat, partitioned] = await readRegistry('listQueues', connection, opts, (client, key, prefix) =>
    Promise.all([
      client.zrange(key, '0', '-1', 'WITHSCORES'),
      // a user allowed the registry alone reads no partitioned queue's number: listed without it
      client.hgetall(registryPartitionsKey(prefix)).catch((err: unknown) => {
        if (isKeyRefused(err)) return {} as Record<string, string>;
        throw err;
      }),
    ]),
  );
  const out: QueueListing[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]!;
    const partitions = partitionCount(partitioned[name]);
    out.push(partitions === undefined ? { name, firstSeen: Number(flat[i + 1]) } : { name, firstSeen: Number(flat[i + 1]), partitions });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A number of partitions as stored beside the registry; anything else written there is left out. */
function partitionCount(stored: string | undefined): number | undefined {
  if (stored === undefined || !/^[1-9]\d{0,3}$/.test(stored)) return undefined;
  const n = Number(stored);
  return n <= PARTITION_BUCKETS ? n : undefined;
}

/**
 * @internal Whether the queue `name` is in the registry of its prefix: one ZSCORE, where
 * listQueues() would fetch every name to test one (the CLI's check that a queue exists).
 */
export async function isListed(connection: ConnectionInput | undefined, name: string, opts: { prefix?: string } = {}): Promise<boolean> {
  assertQueueName(name);
  return (await readRegistry('isListed', connection, opts, (client, key) => client.zscore(key, name))) !== null;
}

/** One read of a prefix's registry: options checked before connecting, on a connection of its own (withConnection). */
async function readRegistry<T>(
  op: string,
  connection: ConnectionInput | undefined,
  opts: { prefix?: string },
  read: (client: RedisClient, key: string, prefix: string) => Promise<T>,
): Promise<T> {
  assertOptions(`${op} options`, opts, ['prefix']);
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  return withConnection(op, connection, (handle) => read(handle.client, registryKey(prefix), prefix));
}
