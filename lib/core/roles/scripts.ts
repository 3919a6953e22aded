import { queueScript } from '../redis/script-def.js';

/** The exclusive roles of a queue. */
export type Role = 'producer' | 'consumer';

/** Which role, held by whom, for how long: the arguments of every role operation. */
export interface RoleArgs {
  role: Role;
  holder: string;
  ttlMs: number;
}

const encode = (a: RoleArgs) => [a.role, a.holder, a.ttlMs];

/** acquire-role.lua's answer: taken, held by another (and for how long still), or the queue is deleted. */
export type AcquireReply = { kind: 'ok' } | { kind: 'held'; holder: string; msLeft: number } | { kind: 'deleted' };

/** Takes an exclusive role (acquire-role.lua). */
export const acquireRoleScript = queueScript({
  name: 'acquireRole',
  file: 'roles/acquire-role.lua',
  ops: ['acquire role'],
  encode,
  decode: (reply): AcquireReply => {
    const r = reply as [string, string?, number?];
    if (r[0] === 'ok' || r[0] === 'deleted') return { kind: r[0] };
    return { kind: 'held', holder: r[1] ?? '', msLeft: Number(r[2] ?? 0) };
  },
});

/** Keeps an exclusive role (refresh-role.lua): false when it was lost. */
export const refreshRoleScript = queueScript({
  name: 'refreshRole',
  file: 'roles/refresh-role.lua',
  ops: ['refresh role'],
  encode,
  decode: (reply) => reply === 1,
});

/** Gives an exclusive role up (release-role.lua): false when this holder did not hold it. */
export const releaseRoleScript = queueScript({
  name: 'releaseRole',
  file: 'roles/release-role.lua',
  ops: ['release role'],
  encode,
  decode: (reply) => reply === 1,
});

export const ROLE_SCRIPTS = [acquireRoleScript, refreshRoleScript, releaseRoleScript] as const;
