import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ConnectionError, RelqError } from './errors.js';
import { Redactor } from './redact.js';
import type { ConnectionInput } from './types.js';

export type RedisClient = Redis | Cluster;

/** A client and whether relq opened it (and so must close it). */
export interface ClientHandle {
  client: RedisClient;
  owned: boolean;
  redactor: Redactor;
  /** Where it points, safe to print. */
  describe: string;
}

// A call should fail within seconds when Redis is away or frozen, not hang: few retries,
// reconnect attempts at most 1 s apart, and a reply timeout (blocking waits have their own).
const OWNED_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 2,
  retryStrategy: (times) => Math.min(times * 100, 1000),
  commandTimeout: 5000,
};

export function isClient(value: unknown): value is RedisClient {
  return value instanceof Redis || value instanceof Cluster;
}

export function openConnection(input: ConnectionInput | undefined): ClientHandle {
  if (isClient(input)) {
    return { client: input, owned: false, redactor: redactorFor(input), describe: describeClient(input) };
  }
  const client =
    typeof input === 'string'
      ? new Redis(input, OWNED_DEFAULTS)
      : new Redis({ ...OWNED_DEFAULTS, ...(input ?? {}) });
  // Errors reach callers through rejected calls; an unhandled 'error' event would crash.
  client.on('error', () => undefined);
  const redactor = new Redactor([client.options.password, typeof input === 'string' ? input : undefined]);
  return { client, owned: true, redactor, describe: describeClient(client) };
}

/**
 * A second connection to the same server for blocking commands or subscriptions,
 * which would otherwise stall every other command on the shared one.
 */
export function duplicateClient(client: RedisClient, purpose: 'blocking' | 'subscriber' = 'blocking'): RedisClient {
  // A blocking wait outlives any reply timeout; relq guards it with its own watchdog.
  // On a Cluster, sharded pub/sub must follow each channel's slot to its node.
  const dup =
    client instanceof Cluster
      ? client.duplicate([], purpose === 'subscriber' ? { shardedSubscribers: true } : {})
      : client.duplicate({ commandTimeout: undefined });
  dup.on('error', () => undefined);
  return dup;
}

function redactorFor(client: RedisClient): Redactor {
  const opts = client instanceof Cluster ? client.options.redisOptions : client.options;
  return new Redactor([opts?.password]);
}

function describeClient(client: RedisClient): string {
  if (client instanceof Cluster) return 'redis cluster';
  const { host, port, path, db } = client.options;
  return path ? `redis unix:${path}` : `redis ${host}:${port}/${db ?? 0}`;
}

const CONNECTION_HINTS = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'Connection is closed',
  'Command timed out',
  'max retries per request',
  'Stream isn\'t writeable',
  'enableOfflineQueue',
  'NOAUTH',
  'WRONGPASS',
];

/** Turns any failure of a Redis call into a relq error whose text holds no secret. */
export function wrapRedisError(err: unknown, op: string, handle: ClientHandle): RelqError {
  if (err instanceof RelqError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const text = handle.redactor.text(raw);
  if (CONNECTION_HINTS.some((h) => raw.toLowerCase().includes(h.toLowerCase()))) {
    return new ConnectionError(`relq ${op}: cannot reach ${handle.describe}: ${text}`);
  }
  return new RelqError(`relq ${op}: ${handle.describe} replied with an error: ${text}`, 'RELQ_REDIS');
}
