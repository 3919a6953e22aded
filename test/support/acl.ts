import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/** The README's least-privilege `ACL SETUSER` line, as written there. */
export function readmeAclLine(): string {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const m = /<!-- acl-line[^>]*-->\n```\n(ACL SETUSER [^\n]+)\n```/.exec(readme);
  if (!m) throw new Error('README.md: no ACL SETUSER line after the acl-line marker');
  return m[1]!;
}

/** The password that line gives the user. */
export const README_ACL_PASSWORD = 'change-this-password';

/** Runs an ACL SETUSER line as redis-cli would (words split on spaces). */
export async function runAclLine(admin: Redis, line: string): Promise<void> {
  const [cmd, ...args] = line.split(/\s+/);
  await admin.call(cmd!, ...args);
}
