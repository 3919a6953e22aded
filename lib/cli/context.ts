import { Cluster } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../core/defaults.js';
import { Queue } from '../core/queue/queue.js';
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
  queue: Queue;
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
  private readonly queues: Queue[] = [];

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
    const queue = this.queue(name);
    const counts = await queue.counts();
    const held = counts.pending + counts.working + counts.delayed + counts.completed + counts.dead + counts.waitingChildren;
    if (held > 0 || counts.paused || (counts.schedulers ?? 0) > 0) return { queue, counts };
    if (await isListed(queue.client, name, { prefix: this.prefix })) return { queue, counts };
    throw new CliError(`no queue '${name}' with prefix '${this.prefix}' (relq queues lists them)`, EXIT.notFound);
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
