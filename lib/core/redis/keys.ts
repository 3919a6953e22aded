/**
 * The key layout of one queue, the one list of its keys. Every key starts with the queue's tag
 * (queueTag()), so a queue lives in one Cluster slot and a script may touch all of its keys. The order of
 * QUEUE_KEYS is the order of KEYS in every script (lib/core/redis/keys.lua), which builds them from the
 * jobs key a call passes.
 */
export const QUEUE_KEYS = [
  'jobs',
  'pending',
  'prio',
  'delayed',
  'working',
  'leases',
  'done',
  'results',
  'dead',
  'meta',
  'wake',
  'dedup',
  'events',
  'seq',
  'listeners',
] as const;

export type QueueKeyName = (typeof QUEUE_KEYS)[number];

export interface QueueKeys {
  readonly tag: string;
  /** All queue keys in script order. */
  readonly all: readonly string[];
  /**
   * The keys a call of an operation on this queue passes before its extra keys: the jobs key
   * alone, from which the scripts build the others (lib/core/redis/keys.lua expandKeys).
   */
  readonly call: readonly string[];
  readonly byName: Readonly<Record<QueueKeyName, string>>;
  /** Keys the scripts derive from the tag (groups, backpressure, roles, stats). */
  readonly derived: DerivedKeys;
  /** Replay record of one lease request. */
  request(reqId: string): string;
}

/**
 * The start of every key of a queue: `{<prefix>:<name>}`, whose hash tag is the whole of it.
 * A name with a tag of its own, `{<tag>}` (at most one, validate.ts assertQueueName), gets
 * `{<prefix>:<tag>}{<name>}`: its slot is that of `<prefix>:<tag>`, the one of every queue whose
 * name has the same tag, so a script may touch them all (a flow across queues, docs/flows.md).
 * The `}{` that follows such a slot part is never in a key of a queue without braces (theirs go
 * on with `}:`), and a name holds one `}` only, so no two queues' keys can meet.
 */
export function queueTag(prefix: string, name: string): string {
  const own = /\{([^{}]+)\}/.exec(name);
  return own ? `{${prefix}:${own[1]}}{${name}}` : `{${prefix}:${name}}`;
}

/** The name of the queue of prefix `prefix` whose tag is `tag` (queueTag's inverse). */
export function queueNameOf(prefix: string, tag: string): string {
  const end = tag.indexOf('}'); // a prefix has no braces: the end of the slot part
  return end === tag.length - 1 ? tag.slice(prefix.length + 2, -1) : tag.slice(end + 2, -1);
}

export function queueKeys(prefix: string, name: string): QueueKeys {
  return keysOfTag(queueTag(prefix, name));
}

/** The keys of the queue whose tag is `tag` (queueTag(), or a partition's: lib/core/partitions/layout.ts). */
export function keysOfTag(tag: string): QueueKeys {
  const byName = Object.fromEntries(QUEUE_KEYS.map((k) => [k, `${tag}:${k}`])) as Record<QueueKeyName, string>;
  return {
    tag,
    all: QUEUE_KEYS.map((k) => byName[k]),
    call: [byName.jobs],
    byName,
    derived: derivedKeys(tag),
    request: (reqId) => `${tag}:req:${reqId}`,
  };
}

/**
 * The registry of the queue names of `prefix` (sorted set: name -> first-seen ms,
 * lib/core/registry/register-queue.lua). Its hash tag `{<prefix>:}` is no queue's (a queue name is never
 * empty), so on a Cluster it has a slot of its own; it still matches an ACL key pattern
 * `~{<prefix>:*` that grants a user the prefix's queues.
 */
export function registryKey(prefix: string): string {
  return `{${prefix}:}:queues`;
}

/** Beside the registry: the partitioned queues of the prefix, name -> number of partitions. */
export function registryPartitionsKey(prefix: string): string {
  return `{${prefix}:}:partitioned`;
}

/**
 * Keys of a queue that the scripts derive from its hash tag instead of receiving them in
 * KEYS (lib/core/redis/keys.lua): a group's pending list cannot be known before the
 * lease script picks the group. They all start with the tag, so they share the queue's
 * Cluster slot. Listed here for tests and docs.
 */
export interface DerivedKeys {
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
  /** hash: job id -> progress JSON its handler wrote */
  progress: string;
  /** hash: job id -> writer, number and lease token of its last log line (the jobs that have a log list) */
  logged: string;
  /** hash: scheduler id -> config and job record template (lib/core/schedulers/schedulers.ts) */
  schedulers: string;
  /** hash: scheduler id -> '<version>:<next slot>:<jobs made>' */
  schedulerState: string;
  /** zset: scheduler id -> its next slot (ms), while it has one */
  schedulerNext: string;
  /** zset: due time -> itself, the due times that two or more delayed jobs share (each has a tie list) */
  ties: string;
  /** zset: dead job id -> end of its retention, the dead jobs with `keepDead.ageMs` */
  deadExpiry: string;
  /** list: the ids of the delayed jobs due at `due` (ms), in the order they were delayed */
  tie(due: number): string;
  /** hash: deduplication id -> '<mode><job id>' of the job holding it (adds/deduplication.lua) */
  dedupIds: string;
  /** zset: deduplication id taken in throttle mode -> end of its window (ms) */
  dedupTtl: string;
  /** hash: deduplication id -> the add kept until its running holder ends (keepLastIfActive) */
  dedupNext: string;
  /** list: one job's log lines, oldest first */
  log(id: string): string;
  /** hash: flow parent id -> 1, the parents whose flow keys exist; '\n<child id>' -> 1, the children holding a parent in another queue (docs/flows.md) */
  flows: string;
  /** zset: parent id waiting for its children -> time it began waiting */
  flowWait: string;
  /** zset: running jobs that became parents under a lease that does not say so -> when last looked at (flows/flows.lua) */
  runningParents: string;
  /** set: a parent's unfinished children */
  deps(id: string): string;
  /** hash: a parent's completed child id -> result json */
  kres(id: string): string;
  /** hash: a parent's child id -> error, for the children it went on without ('ignore', 'continue') */
  kfail(id: string): string;
  /** list: all of a parent's children (as deps members), in the flow's order, for getFlow() */
  kids(id: string): string;
  /** string: leases in the queue's rate-limit window (expires when it ends) */
  limiter: string;
  /** zset: group waiting for its rate-limit window to end -> when it ends (ms) */
  glimited: string;
  /** string: leases in one group's rate-limit window */
  glim(group: string): string;
  /** list of pending job ids of one group */
  group(name: string): string;
  /** string: holder of an exclusive role, with a ttl */
  role(role: 'producer' | 'consumer'): string;
  /** list: a token when the role is released (BLPOP by processes waiting for it) */
  roleFree(role: 'producer' | 'consumer'): string;
  /** zset: token of a lease that cancel() ended -> until when a touch of it answers 'cancelled' (ms) */
  cancelled: string;
  /** hash: token of a lease cancel() ended with a reason -> that reason, which the touch answers */
  cancelWhy: string;
  /** sharded pub/sub channel: the leases cancel() ended, for their workers (lib/core/worker/cancel-notices.ts) */
  cancels: string;
  /** zset: live worker id -> when its entry expires (ms), lib/core/workers/workers.lua */
  workers: string;
  /** hash: live worker id -> '<started ms> <last seen ms> <info json>' */
  workerInfo: string;
}

function derivedKeys(tag: string): DerivedKeys {
  return {
    gactive: `${tag}:gactive`,
    gset: `${tag}:gset`,
    gwork: `${tag}:gwork`,
    groups: `${tag}:groups`,
    waiters: `${tag}:waiters`,
    notfull: `${tag}:notfull`,
    stats: `${tag}:stats`,
    progress: `${tag}:progress`,
    logged: `${tag}:logged`,
    schedulers: `${tag}:scheds`,
    schedulerState: `${tag}:schedstate`,
    schedulerNext: `${tag}:schednext`,
    ties: `${tag}:ties`,
    deadExpiry: `${tag}:deadexp`,
    tie: (due) => `${tag}:tie:${due}`,
    dedupIds: `${tag}:dedupids`,
    dedupTtl: `${tag}:dedupttl`,
    dedupNext: `${tag}:dedupnext`,
    log: (id) => `${tag}:log:${id}`,
    flows: `${tag}:flows`,
    flowWait: `${tag}:flowwait`,
    runningParents: `${tag}:rparents`,
    deps: (id) => `${tag}:deps:${id}`,
    kres: (id) => `${tag}:kres:${id}`,
    kfail: (id) => `${tag}:kfail:${id}`,
    kids: (id) => `${tag}:kids:${id}`,
    limiter: `${tag}:limiter`,
    glimited: `${tag}:glimited`,
    glim: (group) => `${tag}:glim:${group}`,
    group: (name) => `${tag}:g:${name}`,
    role: (role) => `${tag}:role:${role}`,
    roleFree: (role) => `${tag}:role:${role}:free`,
    cancelled: `${tag}:cancelled`,
    cancelWhy: `${tag}:cancelwhy`,
    cancels: `${tag}:cancels`,
    workers: `${tag}:workers`,
    workerInfo: `${tag}:workerinfo`,
  };
}
