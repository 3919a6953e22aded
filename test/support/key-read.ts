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
