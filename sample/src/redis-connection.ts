import { readFileSync } from 'node:fs';
import type { ConnectionInput } from 'relq';

/**
 * Redis from the environment: REDIS_URL (default 127.0.0.1:6379; rediss:// for TLS, with the
 * ACL user and password in it), plus TLS material from files when REDIS_TLS_CA,
 * REDIS_TLS_CERT and REDIS_TLS_KEY are set (a private CA, a client certificate).
 */
export function redisConnection(): ConnectionInput {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const file = (name: string) => (process.env[name] ? readFileSync(process.env[name]) : undefined);
  const [ca, cert, key] = [file('REDIS_TLS_CA'), file('REDIS_TLS_CERT'), file('REDIS_TLS_KEY')];
  if (!ca && !cert && !key) return url;
  return { url, tls: { ca, cert, key } };
}
