import type { IncomingMessage, ServerResponse } from 'node:http';
import { RelqError } from '../core/errors.js';
import { MAX_BODY_BYTES } from './defaults.js';

/** The header an action must carry: a cross-site form or image cannot set it (CSRF). */
export const ACTION_HEADER = 'x-relq-dashboard';

/** An answer other than 200, with a message the page shows (and headers it needs, e.g. a challenge). @internal */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * The text of an error the browser may see, for every answer and every field that carries
 * one: relq's messages name the culprit and never hold a password; anything else stays
 * private. @internal
 */
export function publicMessage(err: unknown): string {
  return err instanceof HttpError || err instanceof RelqError ? err.message : 'internal error';
}

/** Security headers of every answer: no framing, no sniffing, only the dashboard's own scripts and styles. */
const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'cache-control': 'no-store',
};

/** @internal */
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** @internal */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), headers);
}

/**
 * The JSON object body of an action. Refused unless it comes with the action header and a
 * JSON content type, which a cross-site form cannot send without a CORS preflight, and from
 * the dashboard's own origin as far as the browser tells it (sameOrigin).
 * A body a framework already parsed (Express's json()) is taken as it is, within the same
 * size limit. @internal
 */
export async function readAction(req: IncomingMessage & { body?: unknown }): Promise<Record<string, unknown>> {
  if (req.headers[ACTION_HEADER] !== '1') throw new HttpError(403, `actions need the header '${ACTION_HEADER}: 1'`);
  sameOrigin(req);
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'actions need a JSON body (content-type: application/json)');
  const tooLarge = () => new HttpError(413, `action body over ${MAX_BODY_BYTES} bytes`);
  if (req.body !== undefined && req.readableEnded) {
    // The same limit as a body read here, on its length as sent (or as parsed, when chunked).
    if (Number(req.headers['content-length'] ?? Buffer.byteLength(JSON.stringify(req.body))) > MAX_BODY_BYTES) throw tooLarge();
    return asObject(req.body);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return asObject(JSON.parse(text));
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, 'action body is not valid JSON');
  }
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, 'action body must be a JSON object');
  return value as Record<string, unknown>;
}

/**
 * A second CSRF check, should a CORS setup in front of the dashboard let the header through:
 * a browser's `Sec-Fetch-Site` must be `same-origin`; a browser too old to send it sends
 * `Origin` with a POST, whose host must be the request's Host. A client that sends neither
 * (curl, a server) is no browser acting for a logged-in operator.
 */
function sameOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site !== 'same-origin') throw new HttpError(403, 'actions are refused from another site (Sec-Fetch-Site is not same-origin)');
    return;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && hostOf(origin) !== req.headers.host?.toLowerCase()) {
    throw new HttpError(403, 'actions are refused from another origin (Origin does not match Host)');
  }
}

/** The host (and port) of an Origin header; undefined for 'null' or anything unparsable. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}
