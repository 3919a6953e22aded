/**
 * Keys of a queue that the scripts derive from its hash tag instead of receiving them in
 * KEYS (lib/scripts/include/ext.lua): a group's pending list cannot be known before the
 * lease script picks the group. They all start with the tag, so they share the queue's
 * Cluster slot. Listed here for deleteQueue(), tests and docs.
 */
export interface ExtKeys {
  /** list: rotation of groups that may lease now ('' = the ungrouped jobs) */
  gactive: string;
  /** set: the group members of gactive */
  gset: string;
  /** hash: group -> jobs of it leased now */
  gwork: string;
  /** set: groups whose pending list is not empty */
  groups: string;
  /** zset: blocked producer id -> registration expiry (ms, Redis clock) */
  waiters: string;
  /** list: wake-up tokens of blocked producers */
  notfull: string;
  /** hash: pm, pb, cm, cb */
  stats: string;
  /** list of pending job ids of one group */
  group(name: string): string;
  /** string: holder of an exclusive role, with a ttl */
  role(role: 'producer' | 'consumer'): string;
  /** list: a token when the role is released (BLPOP by processes waiting for it) */
  roleFree(role: 'producer' | 'consumer'): string;
}

export function extKeys(tag: string): ExtKeys {
  return {
    gactive: `${tag}:gactive`,
    gset: `${tag}:gset`,
    gwork: `${tag}:gwork`,
    groups: `${tag}:groups`,
    waiters: `${tag}:waiters`,
    notfull: `${tag}:notfull`,
    stats: `${tag}:stats`,
    group: (name) => `${tag}:g:${name}`,
    role: (role) => `${tag}:role:${role}`,
    roleFree: (role) => `${tag}:role:${role}:free`,
  };
}
