import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import { ValidationError } from '../errors.js';
import type { DurabilityOptions } from '../queue/types.js';
import { assertInt, assertOptions } from '../validate.js';
import type { RedisClient } from './connection.js';

export function assertDurability(value: unknown, commandTimeoutMs: number | undefined): asserts value is DurabilityOptions | undefined {
  if (value === undefined) return;
  assertOptions('durability', value, ['replicas', 'timeoutMs']);
  assertInt('durability.replicas', value.replicas, { min: 1, max: 1000 });
  assertInt('durability.timeoutMs', value.timeoutMs, { min: 1, max: 60_000 });
  if (commandTimeoutMs !== undefined && value.timeoutMs >= commandTimeoutMs) {
    throw new ValidationError(
      'durability.timeoutMs',
      `must be below the connection's commandTimeout (${commandTimeoutMs} ms), or every slow WAIT fails as a timeout`,
    );
  }
}

/**
 * Waits until `replicas` replicas acknowledged every write this connection made (WAIT);
 * returns how many did. WAIT must run on the connection that wrote: on a Cluster, the
 * node's connection that serves `key`'s slot.
 */
export async function waitForReplicas(client: RedisClient, key: string, replicas: number, timeoutMs: number): Promise<number> {
  let node: RedisClient = client;
  if (client instanceof Cluster) {
    const master = client.slots[calculateSlot(key)]?.[0];
    const found = client.nodes('master').find((n: Redis) => `${n.options.host}:${n.options.port}` === master);
    if (!found) return 0; // topology unknown right now: nothing confirmed
    node = found;
  }
  return Number(await node.call('WAIT', replicas, timeoutMs));
}
