/**
 * Key layout of one queue. Every key starts with the hash tag `{<prefix>:<name>}`, so a
 * queue lives in one Cluster slot and a script may touch all of its keys. The order of
 * QUEUE_KEYS is the order of KEYS in every script (lib/scripts/include/keys.lua).
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
  readonly byName: Readonly<Record<QueueKeyName, string>>;
  /** Replay record of one lease request. */
  request(reqId: string): string;
}

export function queueKeys(prefix: string, name: string): QueueKeys {
  const tag = `{${prefix}:${name}}`;
  const byName = Object.fromEntries(QUEUE_KEYS.map((k) => [k, `${tag}:${k}`])) as Record<QueueKeyName, string>;
  return {
    tag,
    all: QUEUE_KEYS.map((k) => byName[k]),
    byName,
    request: (reqId) => `${tag}:req:${reqId}`,
  };
}
