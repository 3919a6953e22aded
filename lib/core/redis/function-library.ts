import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connection.js';
import { scriptCode } from './script-code.js';

/**
 * relq's function library on the server. Functions are global to a Redis server: whoever may
 * run FUNCTION LOAD can put other code under relq's library name (or relq's function names),
 * and every FCALL of every user then runs it. So relq reads the library's code back before it
 * calls it (FUNCTION LIST ... WITHCODE) and calls it only when the code is exactly its own;
 * anything else runs as scripts (EVALSHA), which are named by their content's hash.
 */

/** relq's library on one master: this version's code, none, or other code under its name. */
export type FunctionLibraryState = 'loaded' | 'missing' | 'different';

/** How a client runs relq's operations: FCALL of the checked library, or scripts; and what to report. */
export type LibraryVerdict = { use: 'function' } | { use: 'script'; warning?: string };

/** The server has no FUNCTION command, or the ACL user may not run this part of it. */
const REFUSED = /unknown command|unknown subcommand|NOPERM|no permissions/i;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Where a node is, for messages: the address it is connected to (a Sentinel client's options name no master), else its options'. */
export function nodeName(node: Redis): string {
  const stream = (node as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
  if (stream?.remoteAddress) return `${stream.remoteAddress}:${stream.remotePort}`;
  const { host, port, path } = node.options;
  return path ? `unix:${path}` : `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

/** The masters that must each hold the library: every master of a Cluster, or the one server. */
export async function libraryNodes(client: RedisClient): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  // A Cluster knows its nodes once it is ready; a command waits for that. Before, its list may
  // hold the seed nodes' first connections, which it closes once it has read the slots.
  if (client.status !== 'ready' || client.nodes('master').length === 0) await client.ping();
  return client.nodes('master');
}

/** A FUNCTION LIST entry as fields: RESP2 (and ioredis's legacy RESP3) pairs, or a RESP3 map. */
function fieldsOf(entry: unknown): Record<string, unknown> {
  if (Array.isArray(entry)) {
    const out: Record<string, unknown> = {};
    for (let i = 0; i + 1 < entry.length; i += 2) out[String(entry[i])] = entry[i + 1];
    return out;
  }
  return entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
}

/** relq's library on `node`, its code compared with this version's. */
export async function libraryStateOn(node: Redis): Promise<FunctionLibraryState> {
  const { library, libraryName } = scriptCode();
  // LIBRARYNAME is a pattern; relq's name has no glob character, so it matches that name only
  const reply = await node.call('FUNCTION', 'LIST', 'LIBRARYNAME', libraryName, 'WITHCODE');
  const found = (Array.isArray(reply) ? reply : []).map(fieldsOf).find((l) => String(l['library_name']) === libraryName);
  if (!found) return 'missing';
  return String(found['library_code']) === library ? 'loaded' : 'different';
}

/** Loads this version's library on `node`; with `replace`, over a library of the same name. */
export async function loadLibraryOn(node: Redis, replace: boolean): Promise<void> {
  const { library } = scriptCode();
  await node.call('FUNCTION', 'LOAD', ...(replace ? ['REPLACE'] : []), library);
}

/**
 * relq's library on `node`, loaded if it is missing and the user may load it (never over other
 * code: FUNCTION LOAD without REPLACE): what is wrong with it, if anything.
 */
async function problemOn(node: Redis): Promise<string | undefined> {
  const { libraryName } = scriptCode();
  let state = await libraryStateOn(node);
  if (state === 'missing') {
    try {
      await loadLibraryOn(node, false);
      return undefined;
    } catch (err) {
      const msg = messageOf(err);
      // a library of another name registers relq's function names: FCALL would run its code
      if (/Function .* already exists/i.test(msg)) return `another function library on ${nodeName(node)} registers relq's function names (${msg})`;
      // another client loaded it meanwhile: read what it loaded
      if (!/Library '.*' already exists/i.test(msg)) throw err;
      state = await libraryStateOn(node);
    }
  }
  return state === 'different' ? `the function library ${libraryName} on ${nodeName(node)} holds other code than this relq version's` : undefined;
}

/**
 * Whether a client may call relq's library: read on every master, loaded where it is missing
 * and the user may load it, and called only when every master holds exactly this version's
 * code. Where the user may not read or load it, or the server has no functions: scripts,
 * silently (docs/reliability.md). Where other code holds relq's library name or function
 * names: scripts, and a warning. Other failures (a connection lost, a server still loading)
 * reject, and the next call checks again; on a Cluster, a master that does not answer is left
 * out while another does (its calls fail anyway; it is read when it is back: scripts.ts), so a
 * master that fails over stops the calls of its own slots only.
 */
export async function checkLibrary(client: RedisClient): Promise<LibraryVerdict> {
  const nodes = await libraryNodes(client);
  const results = await Promise.allSettled(nodes.map(problemOn));
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  const unexpected = failures.filter((err) => !REFUSED.test(messageOf(err)));
  const answered = results.length - failures.length;
  if (unexpected.length > 0 && !(client instanceof Cluster && answered > 0)) throw unexpected[0];
  const problems = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  if (problems.length > 0) {
    const warning =
      `${problems.join('; ')}. relq does not call it and runs its operations as scripts (EVALSHA) instead. ` +
      "Someone with FUNCTION rights changed it: find out who, and load relq's code with `npx relq functions load` (docs/reliability.md)";
    return { use: 'script', warning };
  }
  return failures.length > unexpected.length ? { use: 'script' } : { use: 'function' };
}
