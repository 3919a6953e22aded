import { closeClient, openConnection, type ClientHandle, type RedisClient } from '../../core/redis/connection.js';
import type { ConnectionInput } from '../../core/redis/types.js';

/**
 * The one command connection every queue of the app shares (producers, lease calls,
 * settles, heartbeats, sweeps, health pings). Lease loops add one blocking connection
 * each, duplicated from it. It is made by the engine's connection factory (same defaults:
 * a call fails within seconds when Redis is away) but connects on first use, so that a
 * bootstrap that fails early leaves no socket behind; it is closed last, in
 * onApplicationShutdown, unless the app passed in its own client.
 */
export class RelqConnection {
  private readonly handle: ClientHandle;
  private closed = false;

  constructor(input: ConnectionInput | undefined) {
    this.handle = openConnection(input, { lazyConnect: true });
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
    if (this.closed || !this.handle.owned) return;
    this.closed = true;
    await closeClient(this.handle.client);
  }
}
