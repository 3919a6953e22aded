import type { ClientHandle } from './connection.js';
import { AuthenticationError, ConnectionError, PermissionError, RelqError } from '../errors.js';

/** The server refused the credentials. */
const AUTH = /WRONGPASS|NOAUTH|invalid username-password pair|user is disabled|AUTH <password> called without any password/i;

/** Server states that end by themselves: restart, failover, a busy script. */
const NOT_SERVING =
  /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|NOREPLICAS|UNBLOCKED)\b|Too many Cluster redirections|^(MOVED|ASK) \d+/i;

/** The connection itself failed (socket, TLS, timeout, topology discovery). */
const UNREACHABLE = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EPROTO',
  'socket hang up',
  'Connection is closed',
  'Command timed out',
  'max retries per request',
  "Stream isn't writeable",
  'enableOfflineQueue',
  'All sentinels are unreachable',
  'Failed to refresh slots cache',
  'None of startup nodes is available',
  "Cluster isn't ready",
  'secure TLS connection',
];

/** TLS failures that no retry fixes: a certificate the other side does not accept. */
const TLS_REJECTED = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|alert (bad|unknown|certificate|decrypt|handshake)|wrong version number/i;

/** A TLS server that refuses the client's certificate just closes the connection. */
const CLOSED = /ECONNRESET|EPIPE|before secure TLS connection/;
const TLS_HINT =
  ' (the server closed the TLS connection during the handshake: it may not accept the client certificate, or require one that was not given)';

/** An ACL refusal of a key the call names (Redis 7.0 and 7.2 word it differently). */
const KEY_REFUSED = /NOPERM.*\bkeys?\b/i;

type CauseError = Error & { code?: string };

/** The server is reading its data after a (re)start: the command did not run. */
export function isLoading(err: unknown): boolean {
  return /^LOADING\b/.test(err instanceof Error ? err.message : String(err));
}

/** The ACL user may run the call but not on one of the keys it names. */
export function isKeyRefused(err: unknown): boolean {
  return KEY_REFUSED.test(err instanceof Error ? err.message : String(err));
}

/**
 * Turns any failure of a Redis call into a typed relq error whose text holds no secret:
 * ConnectionError (retryable) while Redis is unreachable or not serving, with the
 * underlying failure (e.g. a TLS error) as its cause; AuthenticationError and
 * PermissionError for refusals; otherwise a RelqError with code RELQ_REDIS.
 */
export function wrapRedisError(err: unknown, op: string, handle: ClientHandle): RelqError {
  if (err instanceof RelqError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const redact = (s: string) => handle.redactor.text(s);
  const text = redact(raw);
  const where = handle.describe;

  if (AUTH.test(raw)) {
    return new AuthenticationError(`relq ${op}: ${where} refused the credentials: ${text}`, { cause: safeCause(err, redact) });
  }
  if (/NOPERM/i.test(raw)) {
    return new PermissionError(`relq ${op}: the Redis user may not do this on ${where}: ${text}`, { cause: safeCause(err, redact) });
  }
  if (NOT_SERVING.test(raw)) {
    return new ConnectionError(`relq ${op}: ${where} is not serving right now: ${text}`, { cause: safeCause(err, redact) });
  }
  const socketCode = (err as CauseError | undefined)?.code;
  if (UNREACHABLE.some((h) => raw.toLowerCase().includes(h.toLowerCase())) || (socketCode && /^E[A-Z]+$|CERT|TLS/.test(socketCode))) {
    // ioredis reports "max retries" or "Connection is closed"; the reason is the last
    // failure the connection saw (refused, reset, TLS handshake, auth during connect).
    const own = socketCode ? (err as CauseError) : undefined;
    const cause = own ?? handle.trail.lastError;
    const causeText = cause && cause !== err ? describeCause(cause, redact) : undefined;
    if (cause && cause !== err && AUTH.test(cause.message)) {
      return new AuthenticationError(`relq ${op}: ${where} refused the credentials: ${causeText}`, { cause: safeCause(cause, redact) });
    }
    const tried = handle.trail.lastAddress;
    const at = tried && !where.includes(tried) ? ` (last address tried ${tried})` : '';
    const why = (causeText ? `: ${causeText}; ${text}` : `: ${text}`) + (handle.tls && cause && CLOSED.test(`${cause.code ?? ''} ${cause.message}`) ? TLS_HINT : '');
    const permanent = cause !== undefined && TLS_REJECTED.test(`${cause.code ?? ''} ${cause.message}`);
    return new ConnectionError(`relq ${op}: cannot reach ${where}${at}${why}`, {
      cause: cause ? safeCause(cause, redact) : undefined,
      retryable: !permanent,
    });
  }
  if (/^OOM\b/.test(raw)) {
    return new RelqError(`relq ${op}: ${where} is out of memory (maxmemory, noeviction): ${text}`, 'RELQ_REDIS', {
      cause: safeCause(err, redact),
      retryable: true,
    });
  }
  return new RelqError(`relq ${op}: ${where} replied with an error: ${text}`, 'RELQ_REDIS', { cause: safeCause(err, redact) });
}

function describeCause(cause: CauseError, redact: (s: string) => string): string {
  const code = cause.code && !cause.message.includes(cause.code) ? ` (${cause.code})` : '';
  return redact(`${cause.message}${code}`);
}

/**
 * The underlying error without anything that may hold a secret: ioredis errors carry the
 * command's arguments (an AUTH password, a script's payload), so only the redacted message
 * and the code are kept.
 */
function safeCause(err: unknown, redact: (s: string) => string): Error {
  const e = err as CauseError;
  const copy: CauseError = new Error(redact(e instanceof Error ? e.message : String(err)));
  if (e instanceof Error) copy.name = e.name;
  if (typeof e?.code === 'string') copy.code = e.code;
  return copy;
}
