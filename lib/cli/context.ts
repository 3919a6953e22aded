import { Cluster } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../core/defaults.js';
import { Queue } from '../core/queue/queue.js';
import { partitionMapKey } from '../core/partitions/layout.js';
import { PartitionedQueue } from '../core/partitions/partitioned-queue.js';
import { isListed } from '../core/registry/registry.js';
import { assertConnection, closeClient } from '../core/redis/connection.js';
import type { Redactor } from '../core/redis/redact.js';
import type { QueueCounts } from '../core/management/read-types.js';
import type { ConnectionInput } from '../core/redis/types.js';
import { CliError, EXIT } from './exit-codes.js';
import { Output } from './output.js';

/** The global options (before or after the command). */
export interface GlobalOptions {
  redis?: string;
  /** Always set: program.ts gives --prefix its default. */
  prefix: string;
  json?: boolean;
  cluster?: boolean;
}

/** The password inside a redis:// URL, if any: a secret to mask wherever it appears. */
export function passwordOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** A queue found by existingQueue(), and its counts as they were then. */
export interface ExistingQueue {
  /** A PartitionedQueue when the queue has a partition map (docs/scale-out.md): every command then covers all of its partitions. */
  queue: Queue | PartitionedQueue;
  counts: QueueCounts;
}

/**
 * What one command run works with: where Redis is, the prefix, the output, and the Queue
 * objects it opened (each closed by close(), so the process ends by itself).
 */
export class CliContext {
  readonly url: string;
  readonly prefix: string;
  readonly output: Output;
  /** What queues and listQueues connect with: the URL, or with --cluster a Cluster client seeded by it. */
  readonly connection: ConnectionInput;
  private readonly queues: Array<Queue | PartitionedQueue> = [];

  /** `redactor` is the run's one (program.ts): it knows the passwords of --redis and of REDIS_URL. */
  constructor(opts: GlobalOptions, redactor: Redactor) {
    this.url = opts.redis ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
    this.prefix = opts.prefix;
    this.output = new Output(opts.json === true, redactor);
    this.connection = opts.cluster ? clusterOf(this.url) : this.url;
  }

  /** A Queue object on `name` (nothing is read or written yet). */
  queue(name: string): Queue {
    const q = new Queue(name, {
      connection: this.connection,
      prefix: this.prefix,
      evictionCheck: 'off', // an operator's look at a queue is no place for a server-policy warning
      onWarning: (w) => this.output.note(`warning: ${w.message}`),
    });
    this.queues.push(q);
    return q;
  }

  /**
   * A Queue object on an existing queue, with the counts read to find it: one that is
   * registered or holds jobs, a pause or schedulers. Anything else is most likely a typo:
   * CliError with EXIT.notFound, before any write.
   */
  async existingQueue(name: string): Promise<ExistingQueue> {
    const { plain, queue } = await this.anyQueue(name);
    const counts = await queue.counts();
    const held = counts.pending + counts.working + counts.delayed + counts.completed + counts.dead + counts.waitingChildren;
    if (held > 0 || counts.paused || (counts.schedulers ?? 0) > 0) return { queue, counts };
    if (await isListed(plain.client, name, { prefix: this.prefix })) return { queue, counts };
    throw new CliError(`no queue '${name}' with prefix '${this.prefix}' (relq queues lists them)`, EXIT.notFound);
  }

  /**
   * The queue `name`, whether it exists or not: a PartitionedQueue when it has a partition map,
   * else a Queue (`plain`, also returned, reads the map and the registry).
   */
  async anyQueue(name: string): Promise<{ plain: Queue; queue: Queue | PartitionedQueue }> {
    const plain = this.queue(name);
    const partitions = await this.partitionsOf(plain, name);
    return { plain, queue: partitions === undefined ? plain : this.partitioned(name, partitions) };
  }

  /** The number of partitions in the map of a partitioned queue `name`; undefined for a queue without one. Read-only. */
  private async partitionsOf(plain: Queue, name: string): Promise<number | undefined> {
    if (/[{}]/.test(name)) return undefined; // a partitioned queue's name has no braces
    let n: string | null;
    try {
      n = await plain.client.hget(partitionMapKey(this.prefix, name), 'n');
    } catch (err) {
      await plain.counts(); // the same failure as a relq call: a typed error (credentials, reachability), with its exit code
      throw err;
    }
    return n === null ? undefined : Number(n);
  }

  private partitioned(name: string, partitions: number): PartitionedQueue {
    const q = new PartitionedQueue(name, {
      connection: this.connection,
      prefix: this.prefix,
      partitions,
      evictionCheck: 'off',
      onWarning: (w) => this.output.note(`warning: ${w.message}`),
    });
    this.queues.push(q);
    return q;
  }

  /** Closes every connection this run opened. */
  async close(): Promise<void> {
    await Promise.all(this.queues.splice(0).map((q) => q.close().catch(() => undefined)));
    if (this.connection instanceof Cluster) await closeClient(this.connection); // relq never closes a client passed in
  }
}

/** A Cluster client whose seed node, credentials and TLS come from a redis:// or rediss:// URL. */
function clusterOf(url: string): Cluster {
  assertConnection('--redis', url); // refuses a URL that does not parse, without its password
  const u = new URL(url);
  const redisOptions = {
    username: decodeURIComponent(u.username) || undefined,
    password: passwordOf(url),
    tls: u.protocol === 'rediss:' ? {} : undefined,
    enableReadyCheck: false, // as relq's own connections: no INFO needed (lib/core/redis/connection.ts)
  };
  return new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], { redisOptions });
}
