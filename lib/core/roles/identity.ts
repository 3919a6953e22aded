import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RoleHolder } from '../errors.js';

/** Who this process is, for exclusive roles and waiter ids: host, pid and a random instance. */
export function newIdentity(): RoleHolder {
  return { host: hostname(), pid: process.pid, instance: randomBytes(6).toString('base64url') };
}

export function parseHolder(value: string | null | undefined): RoleHolder | undefined {
  if (!value) return undefined;
  try {
    const h = JSON.parse(value) as Partial<RoleHolder>;
    if (typeof h.host === 'string' && typeof h.pid === 'number' && typeof h.instance === 'string') {
      return { host: h.host, pid: h.pid, instance: h.instance };
    }
  } catch {
    // not ours
  }
  return undefined;
}
