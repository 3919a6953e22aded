import { ownKeysScript } from '../redis/script-def.js';

/** The arguments of both registry operations, on the registry key alone. */
export interface RegistryArgs {
  name: string;
}

const encode = (a: RegistryArgs) => [a.name];
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

/** Either registry operation. */
export type RegistryScript = typeof registerQueueScript | typeof unregisterQueueScript;

export const REGISTRY_SCRIPTS = [registerQueueScript, unregisterQueueScript] as const;
