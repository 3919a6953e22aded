import { ownKeysScript } from '../redis/script-def.js';

/** The arguments of the registry operations. */
export interface RegistryArgs {
  name: string;
  /** A partitioned queue's number of partitions (registerPartitioned only). */
  partitions?: number;
}

const encode = ({ name, partitions }: RegistryArgs) => (partitions === undefined ? [name] : [name, partitions]);
const decode = (reply: unknown) => reply === 1;

/** Lists a queue's name (register-queue.lua): true when it was not listed. */
export const registerQueueScript = ownKeysScript({
  name: 'registerQueue',
  file: 'registry/register-queue.lua',
  ops: ['registry'],
  ownKeys: 1,
  encode,
  decode,
});

/** Unlists a queue's name (unregister-queue.lua): true when it was listed. */
export const unregisterQueueScript = ownKeysScript({
  name: 'unregisterQueue',
  file: 'registry/unregister-queue.lua',
  ops: ['registry'],
  ownKeys: 1,
  encode,
  decode,
});

/**
 * A partitioned queue's pair, on the registry and the hash of partition numbers beside it (the
 * same slot). Apart from the queues' pair, so that an ACL user allowed `~{<prefix>:}:queues`
 * alone still lists its queues.
 */
export const registerPartitionedScript = ownKeysScript({
  name: 'registerPartitioned',
  file: 'registry/register-partitioned.lua',
  ops: ['registry'],
  ownKeys: 2,
  encode,
  decode,
});

export const unregisterPartitionedScript = ownKeysScript({
  name: 'unregisterPartitioned',
  file: 'registry/unregister-partitioned.lua',
  ops: ['registry'],
  ownKeys: 2,
  encode,
  decode,
});

/** A registry operation. */
export type RegistryScript = typeof registerQueueScript | typeof unregisterQueueScript | typeof registerPartitionedScript | typeof unregisterPartitionedScript;

export const REGISTRY_SCRIPTS = [registerQueueScript, unregisterQueueScript, registerPartitionedScript, unregisterPartitionedScript] as const;
