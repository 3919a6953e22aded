import type { Redis } from 'ioredis';

/** The command that reads a whole key of Redis `type` (as TYPE names it), for snapshots of a keyspace in tests. */
export function readCommand(type: string, key: string): [string, ...string[]] {
  switch (type) {
    case 'string':
      return ['get', key];
    case 'hash':
      return ['hgetall', key];
    case 'list':
      return ['lrange', key, '0', '-1'];
    case 'set':
      return ['smembers', key];
    case 'zset':
      return ['zrange', key, '0', '-1', 'WITHSCORES'];
    default:
      return ['type', key];
  }
}

/**
 * A key's type and content as canonical JSON (hash fields and set members sorted), for "nothing
 * written" comparisons. Not DUMP: a read may advance the incremental rehash of a hash stored as a
 * hashtable (records over 64 bytes), which reorders its DUMP without any write.
 */
export async function keyContent(c: Redis, key: string): Promise<string> {
  const type = await c.type(key);
  const value: unknown = await c.call(...readCommand(type, key));
  if (type === 'hash') {
    // ioredis answers HGETALL with an object even through call()
    const fields = Array.isArray(value) ? toObject(value as string[]) : (value as Record<string, string>);
    return JSON.stringify([type, Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  }
  if (type === 'set') return JSON.stringify([type, [...(value as string[])].sort()]);
  return JSON.stringify([type, value]);
}

function toObject(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}
