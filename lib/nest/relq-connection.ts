import { Cluster, Redis } from 'ioredis';
import { isClient, openConnection, type ClientHandle, type RedisClient } from '../core/connection.js';
import type { ConnectionInput } from '../core/types.js';

/**
 * The one command connection every queue of the app shares (producers, lease calls,
 * settles, heartbeats, sweeps, health pings). Lease loops add one blocking connection
 * each, duplicated from it. It connects on first use (so a bootstrap that fails early
 * leaves no socket behind) and is closed last, in onApplicationShutdown, unless the app
 * passed in its own client.
 */
export class RelqConnection {
  private readonly handle: ClientHandle;
  private readonly owned: boolean;
  private closed = false;

  constructor(input: ConnectionInput | undefined) {
    if (isClient(input)) {
      this.owned = false;
      this.handle = openConnection(input);
    } else {
      // Same defaults as the engine's own connections (a producer call fails within
      // seconds when Redis is away), plus lazyConnect.
      const client =
        typeof input === 'string'
          ? new Redis(input, { maxRetriesPerRequest: 3, lazyConnect: true })
          : new Redis({ maxRetriesPerRequest: 3, ...(input ?? {}), lazyConnect: true });
      // Failures reach callers as rejected calls; an unhandled 'error' event would crash.
      client.on('error', () => undefined);
      this.owned = true;
      this.handle = openConnection(client);
    }
  }

  get client(): RedisClient {
    return this.handle.client;
  }

  /** Where it points, without credentials. */
  get describe(): string {
    return this.handle.describe;
  }

  /** Removes secrets from a message about this connection. */
  redact(text: string): string {
    return this.handle.redactor.text(text);
  }

  async close(): Promise<void> {
    if (this.closed || !this.owned) return;
    this.closed = true;
    const client = this.handle.client;
    if (client instanceof Cluster || client.status !== 'wait') {
      await Promise.race([
        client.quit().catch(() => undefined),
        new Promise<void>((resolve) => setTimeout(resolve, 1000).unref()),
      ]);
    }
    client.disconnect();
  }
}
