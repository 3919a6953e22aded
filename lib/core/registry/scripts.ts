import { ownKeysScript } from '../redis/script-def.js';

/** Lists or unlists a queue's name (registry.lua, on the registry key alone): true when that changed the registry. */
export const registryScript = ownKeysScript({
  name: 'registry',
  file: 'registry/registry.lua',
  ops: ['registry'],
  ownKeys: 1,
  encode: (a: { verb: 'add' | 'remove'; name: string }) => [a.verb, a.name],
  decode: (reply) => reply === 1,
});

export const REGISTRY_SCRIPTS = [registryScript] as const;
