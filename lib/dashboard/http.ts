import type { IncomingMessage, ServerResponse } from 'node:http';

/** The header an action must carry: a cross-site form or image cannot set it (CSRF). */
export const ACTION_HEADER = 'x-relq-dashboard';

/** Largest action body read (actions carry a few small fields). */
const MAX_BODY_BYTES = 16 * 1024;

/** An answer other than 200, with a message the page shows. @internal */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** @internal */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

/**
 * The JSON object body of an action. Refused unless it comes with the action header and a
 * JSON content type, which a cross-site form cannot send without a CORS preflight.
 * A body a framework already parsed (Express's json()) is taken as it is. @internal
 */
export async function readAction(req: IncomingMessage & { body?: unknown }): Promise<Record<string, unknown>> {
  if (req.headers[ACTION_HEADER] !== '1') throw new HttpError(403, `actions need the header '${ACTION_HEADER}: 1'`);
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'actions need a JSON body (content-type: application/json)');
  if (req.body !== undefined && req.readableEnded) return asObject(req.body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `action body over ${MAX_BODY_BYTES} bytes`);
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
