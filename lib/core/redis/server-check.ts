import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';
import { ServerConfigError, ValidationError } from '../errors.js';
import type { WarningHandler } from '../warnings.js';

/** What a queue does about a server that may evict keys: warn once (default), refuse, or not check. */
import type { EvictionCheck } from '../queue/types.js';

const EVICTION_CHECKS: readonly EvictionCheck[] = ['warn', 'error', 'off'];

export function assertEvictionCheck(value: unknown): asserts value is EvictionCheck | undefined {
  if (value !== undefined && !EVICTION_CHECKS.includes(value as EvictionCheck)) {
    throw new ValidationError('evictionCheck', `must be one of ${EVICTION_CHECKS.map((c) => `'${c}'`).join(', ')}`);
  }
}

type Policies = Array<{ node: string; policy: string }>;

/**
 * maxmemory-policy of each master, read once per client: the policies, 'hidden' where CONFIG
 * is refused (managed services, least-privilege users), or undefined when the reading did
 * not come through (not connected yet, a node away): then it is read again next time.
 */
const readings = new WeakMap<RedisClient, Promise<Policies | 'hidden' | undefined>>();
/** Clients whose evicting policy was already reported (one warning per connection). */
const warned = new WeakSet<RedisClient>();

function readPolicies(client: RedisClient): Promise<Policies | 'hidden' | undefined> {
  let reading = readings.get(client);
  if (!reading) {
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    reading = Promise.all(
      nodes.map(async (n) => {
        const [, policy] = (await n.call('CONFIG', 'GET', 'maxmemory-policy')) as [string, string];
        return { node: `${n.options.host}:${n.options.port}`, policy };
      }),
    ).then(
      (policies) => {
        if (policies.length === 0) readings.delete(client); // a Cluster not connected yet
        return policies.length ? policies : undefined;
      },
      (err: unknown) => {
        if (/NOPERM|unknown (sub)?command|^ERR/i.test(err instanceof Error ? err.message : String(err))) return 'hidden' as const;
        readings.delete(client);
        return undefined;
      },
    );
    readings.set(client, reading);
  }
  return reading;
}

/**
 * An evicted key is a lost job: under any maxmemory-policy but noeviction, Redis deletes
 * whole keys of a queue (its job records, its pending list) when memory runs out. Checks
 * where the server lets CONFIG GET be read; warns once per connection, or refuses. Resolves
 * to false when the reading did not come through (the caller checks again next time); the
 * check never fails a call for its own sake.
 */
export async function checkEvictionPolicy(client: RedisClient, queue: string, mode: EvictionCheck, warn: WarningHandler): Promise<boolean> {
  if (mode === 'off') return true;
  const policies = await readPolicies(client);
  if (policies === undefined) return false;
  if (policies === 'hidden') return true;
  const evicting = policies.filter((p) => p.policy !== 'noeviction');
  if (evicting.length === 0) return true;
  const which = evicting.map((p) => `'${p.policy}' on ${p.node}`).join(', ');
  const message =
    `Redis maxmemory-policy is ${which}: when memory runs out Redis deletes whole keys, and queue '${queue}' ` +
    'loses jobs with them (job records, pending lists, leases). Set maxmemory-policy to noeviction ' +
    "(docs/reliability.md), or pass evictionCheck: 'off' where the policy cannot be changed.";
  if (mode === 'error') throw new ServerConfigError('maxmemory-policy', evicting[0]!.policy, message);
  if (!warned.has(client)) {
    warned.add(client);
    warn({ code: 'RELQ_EVICTION_POLICY', queue, message });
  }
  return true;
}
