import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { withDeadline } from '../deadline.js';
import { ValidationError } from '../errors.js';
import { Redactor } from './redact.js';
import { resumeCutShortConnects } from './resume-connect.js';
import type { ConnectionInput, ConnectionOptions } from './types.js';

export type RedisClient = Redis | Cluster;

/** How long a connection failure stays the likely cause of a failed call. */
const CAUSE_TTL_MS = 60_000;

/**
 * What relq saw of a connection and its duplicates: the last connection failure (the cause
 * that ioredis's "max retries" or "Connection is closed" hides) and the last address it
 * reached or tried (a Sentinel or Cluster client's own options name neither).
 */
export class ConnectionTrail {
  private error: (Error & { code?: string }) | undefined;
  private errorAt = 0;
  private address: string | undefined;

  watch(client: RedisClient): void {
    // Errors reach callers through rejected calls; an unhandled 'error' event would crash.
    client.on('error', (err: Error & { address?: string; port?: number }) => {
      this.error = err;
      this.errorAt = Date.now();
      if (err.address) this.address = err.port ? `${err.address}:${err.port}` : err.address;
    });
    client.on('connect', () => {
      const stream = (client as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
      if (stream?.remoteAddress) this.address = `${stream.remoteAddress}:${stream.remotePort}`;
    });
    client.on('ready', () => (this.error = undefined));
  }

  /** The last connection failure, if recent. */
  get lastError(): (Error & { code?: string }) | undefined {
    return this.error && Date.now() - this.errorAt < CAUSE_TTL_MS ? this.error : undefined;
  }

  get lastAddress(): string | undefined {
    return this.address;
  }
}

const trails = new WeakMap<RedisClient, ConnectionTrail>();

/** A client and whether relq opened it (and so must close it). */
export interface ClientHandle {
  client: RedisClient;
  owned: boolean;
  redactor: Redactor;
  /** Where it points, safe to print. */
  describe: string;
  trail: ConnectionTrail;
  /** It speaks TLS. */
  tls: boolean;
  /**
   * How long relq waits for a reply before a call fails, where the client itself would wait
   * forever: a Cluster queues commands while it is down, and a client passed in may have no
   * reply timeout. Undefined where the client bounds its calls (relq's own connections).
   */
  callDeadlineMs: number | undefined;
}

/** `call` under the handle's deadline, where its client sets none (`callDeadlineMs`). */
export function boundedCall<T>(handle: ClientHandle, call: Promise<T>): Promise<T> {
  const ms = handle.callDeadlineMs;
  return ms === undefined ? call : withDeadline(call, ms, `Command timed out: no reply within ${ms} ms`);
}

/** The reply wait relq imposes on a client that sets none (a Cluster, or a client passed in). */
export const CALL_DEADLINE_MS = 10_000;

function callDeadlineOf(client: RedisClient): number | undefined {
  if (client instanceof Cluster) return CALL_DEADLINE_MS;
  return client.options.commandTimeout === undefined ? CALL_DEADLINE_MS : undefined;
}

/**
 * How long a connection relq closes may take to close before its socket is destroyed. ioredis
 * waits 2 s by default for a 'close' that, on a socket already gone (Redis away, a killed
 * connection, a node that went down), came before: a timer that kept the process alive.
 */
const CLOSE_GRACE_MS = 100;

// A call should fail within seconds when Redis is away or frozen, not hang: few retries,
// reconnect attempts at most 1 s apart, and a reply timeout (blocking waits have their own).
// A connection that stays silent that long after a command is presumed half-open (a peer or
// NAT gone without a reset) and replaced; on its own, a reply timeout would keep it forever.
// No ready check: it asks INFO, which a least-privilege user need not have (ioredis would warn
// on every connection); a server still loading its data is waited for by afterLoading().
// The one set of defaults for every connection relq opens, engine and Nest alike.
const OWNED_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 2,
  retryStrategy: (times) => Math.min(times * 100, 1000),
  commandTimeout: 5000,
  socketTimeout: 5000,
  enableReadyCheck: false,
  disconnectTimeout: CLOSE_GRACE_MS,
};

export function isClient(value: unknown): value is RedisClient {
  return value instanceof Redis || value instanceof Cluster;
}

/** The reply timeout a connection made from `input` has (undefined: none). */
export function commandTimeoutOf(input: ConnectionInput | undefined): number | undefined {
  if (input instanceof Cluster) return input.options.redisOptions?.commandTimeout;
  if (input instanceof Redis) return input.options.commandTimeout;
  if (typeof input === 'object' && input !== null && 'commandTimeout' in input) return input.commandTimeout;
  return OWNED_DEFAULTS.commandTimeout;
}

/** The one check of a `connection` option (engine and Nest). */
export function assertConnection(field: string, value: unknown): asserts value is ConnectionInput | undefined {
  if (value === undefined || isClient(value)) return;
  if (typeof value === 'string') {
    assertUrl(field, value);
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(field, 'must be a redis:// or rediss:// URL, connection options or an ioredis client');
  }
  const url = (value as ConnectionOptions).url;
  if (url !== undefined) {
    if (typeof url !== 'string') throw new ValidationError(`${field}.url`, 'must be a redis:// or rediss:// URL');
    assertUrl(`${field}.url`, url);
  }
}

function assertUrl(field: string, url: string): void {
  // Only what follows the credentials, so that a password never reaches the message.
  const shown = url.split('@').pop();
  if (!/^rediss?:\/\//i.test(url)) {
    throw new ValidationError(field, `must be a redis:// or rediss:// URL, got '${shown}'`);
  }
  // ioredis would throw Node's own error, whose `input` holds the whole URL, password too.
  if (!URL.canParse(url)) throw new ValidationError(field, `is not a valid URL: '${shown}'`);
}

/**
 * The command connection of a Queue (or of the Nest module): the client passed in, or a new
 * one with relq's defaults. `lazyConnect` waits for the first command (Nest: a bootstrap that
 * fails early leaves no socket behind).
 */
export function openConnection(input: ConnectionInput | undefined, opts: { lazyConnect?: boolean } = {}): ClientHandle {
  assertConnection('connection', input);
  if (isClient(input)) {
    // One trail per client passed in: many queues share one (Nest), and each listener stays.
    let trail = trails.get(input);
    if (!trail) {
      trail = new ConnectionTrail();
      trail.watch(input);
      trails.set(input, trail);
    }
    return {
      client: input,
      owned: false,
      redactor: redactorFor(input),
      describe: describeClient(input),
      trail,
      tls: usesTls(input),
      callDeadlineMs: callDeadlineOf(input),
    };
  }
  const lazy = opts.lazyConnect ? { lazyConnect: true } : {};
  let client: Redis;
  let url: string | undefined;
  if (typeof input === 'string') {
    url = input;
    client = new Redis(input, { ...OWNED_DEFAULTS, ...lazy });
  } else {
    const { url: given, ...rest } = input ?? {};
    url = given;
    // A Sentinel client that never saw a socket error keeps writing to a demoted master
    // after a failover unless it listens for the switch (docs/reliability.md).
    const sentinel = rest.sentinels ? { failoverDetector: true } : {};
    const options: RedisOptions = { ...OWNED_DEFAULTS, ...sentinel, ...rest, ...lazy };
    client = url === undefined ? new Redis(options) : new Redis(url, options);
  }
  resumeCutShortConnects(client);
  const trail = new ConnectionTrail();
  trail.watch(client);
  const redactor = new Redactor([...secretsOf(client.options), url]);
  return { client, owned: true, redactor, describe: describeClient(client), trail, tls: usesTls(client), callDeadlineMs: callDeadlineOf(client) };
}

/**
 * A second connection to the same server for blocking commands or subscriptions, which
 * would otherwise stall every other command on the shared one. A Cluster's is built from
 * every node the cluster client knows (its last slot map), whether or not it has talked to
 * them yet: its original seed nodes may have failed over since, and the nodes it has
 * connections to may be none but those (a client that only used a failed master).
 */
export function duplicateClient(handle: ClientHandle, purpose: 'blocking' | 'subscriber' = 'blocking'): RedisClient {
  const { client } = handle;
  // A blocking wait outlives any reply timeout; relq guards it with its own watchdog. Its
  // own connection closes as relq's do, even when duplicated from a client passed in.
  const own: RedisOptions = { commandTimeout: undefined, socketTimeout: undefined, disconnectTimeout: CLOSE_GRACE_MS };
  let dup: RedisClient;
  if (client instanceof Cluster) {
    // On a Cluster, sharded pub/sub must follow each channel's slot to its node.
    const redisOptions = { ...client.options.redisOptions, ...own };
    const options = purpose === 'subscriber' ? { shardedSubscribers: true, redisOptions } : { redisOptions };
    // None known (never connected): duplicate() falls back to the seed nodes.
    const nodes = client.nodes('all').map((n) => ({ host: n.options.host, port: n.options.port }));
    dup = client.duplicate(nodes, options);
  } else {
    // A blocking command cut off by a reconnect is not sent again: its waiter has moved on
    // (blocking-wait.ts) and a second BLPOP would take a value that nobody reads.
    const resend = purpose === 'subscriber';
    dup = client.duplicate({ ...own, autoResendUnfulfilledCommands: resend });
    resumeCutShortConnects(dup);
  }
  handle.trail.watch(dup);
  return dup;
}

function usesTls(client: RedisClient): boolean {
  return Boolean(client instanceof Cluster ? client.options.redisOptions?.tls : client.options.tls);
}

function secretsOf(options: RedisOptions | undefined): Array<string | undefined> {
  const tls = options?.tls as { passphrase?: string } | undefined;
  return [options?.password, options?.sentinelPassword, tls?.passphrase];
}

function redactorFor(client: RedisClient): Redactor {
  return new Redactor(secretsOf(client instanceof Cluster ? client.options.redisOptions : client.options));
}

function describeClient(client: RedisClient): string {
  if (client instanceof Cluster) {
    const seeds = (client as unknown as { startupNodes?: Array<{ host?: string; port?: number } | string | number> }).startupNodes ?? [];
    const list = seeds.map((n) => (typeof n === 'object' ? `${n.host ?? '127.0.0.1'}:${n.port ?? 6379}` : String(n)));
    return `redis cluster (seed nodes ${list.join(', ') || 'unknown'})`;
  }
  const { host, port, path, db, sentinels, name, tls } = client.options;
  if (sentinels?.length) {
    const list = sentinels.map((s) => `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`).join(', ');
    return `redis sentinel master set '${name ?? 'mymaster'}' (sentinels ${list})`;
  }
  const scheme = tls ? 'rediss' : 'redis';
  return path ? `redis unix:${path}` : `${scheme} ${host}:${port}/${db ?? 0}`;
}

/**
 * Closes a connection relq opened: QUIT while it is up (so that pending replies arrive, for at
 * most a second), then disconnect(), which also ends what ioredis keeps beside the socket (a
 * Sentinel client's failover-detector subscriptions outlive QUIT).
 */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client instanceof Redis && client.status === 'reconnecting') {
    endWhileReconnecting(client);
    return;
  }
  if (client instanceof Cluster || (client.status !== 'wait' && client.status !== 'end')) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.quit().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)))]);
    clearTimeout(timer);
  }
  client.disconnect();
}

/**
 * Ends a client that waits to reconnect (no socket), as ioredis ends one whose connection is
 * closed for good. There, its disconnect() only cancels the next attempt: the commands queued
 * meanwhile were neither sent nor rejected, and their reply timers kept the process alive for
 * up to `commandTimeout`; later commands queued behind them. Now they fail as on any closed
 * connection.
 */
function endWhileReconnecting(client: Redis): void {
  client.disconnect();
  const internal = client as unknown as { setStatus(status: 'end'): void; flushQueue(err: Error): void };
  internal.setStatus('end');
  internal.flushQueue(new Error('Connection is closed.'));
}
