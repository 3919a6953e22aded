import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connection.js';
import { checkLibrary } from './function-library.js';
import { scriptCode, type ScriptName } from './script-code.js';

type ScriptCommand = (...args: Array<string | number>) => Promise<unknown>;

type Mode = 'unchecked' | 'function' | 'script';

interface ClientState {
  /**
   * How this client runs operations: 'unchecked' until relq's library was read on the server
   * (again after every reconnect: a restart, a failover or a new Cluster node may bring other
   * code), then 'function' (FCALL of the library, its code checked) or 'script' (EVALSHA).
   */
  mode: Mode;
  checking?: Promise<Mode>;
}
const states = new WeakMap<RedisClient, ClientState>();

/**
 * Calls `changed` whenever a connection of `client` closes; for a Cluster, also when a node's
 * connection is ready again (a master left out of a check while it was away is read then).
 */
function onConnectionChange(client: RedisClient, changed: () => void): void {
  if (!(client instanceof Cluster)) {
    client.on('close', changed);
    return;
  }
  const watch = (node: Redis) => node.on('close', changed).on('ready', changed);
  client.nodes('all').forEach(watch);
  client.on('+node', (node: Redis) => {
    watch(node);
    changed();
  });
}

function stateOf(client: RedisClient): ClientState {
  let s = states.get(client);
  if (!s) {
    const state: ClientState = { mode: 'unchecked' };
    onConnectionChange(client, () => (state.mode = 'unchecked'));
    states.set(client, state);
    s = state;
  }
  return s;
}

/** Settles the client's mode (one check at a time) and resolves to it; a warning goes to `report`. */
function check(client: RedisClient, state: ClientState, report: ((message: string) => void) | undefined): Promise<Mode> {
  state.checking ??= checkLibrary(client)
    .then((verdict) => {
      state.mode = verdict.use;
      if ('warning' in verdict && verdict.warning) report?.(verdict.warning);
      return verdict.use;
    })
    .finally(() => (state.checking = undefined));
  return state.checking;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Registers the stand-alone scripts: EVALSHA, with EVAL when the server answers NOSCRIPT. */
function scriptCommand(client: RedisClient, name: ScriptName): ScriptCommand {
  const key = `relq_${name}`;
  const c = client as unknown as Record<string, ScriptCommand | undefined>;
  if (!c[key]) {
    client.defineCommand(key, {
      lua: scriptCode().scripts[name],
    });
  }
  return c[key]!;
}

/**
 * Runs one operation as one atomic call: FCALL of the relq library (its helpers are compiled
 * once on the server instead of on every call) once its code on the server was read and found
 * to be exactly this version's (lib/core/redis/function-library.ts), else EVALSHA. The check
 * costs a call once per connection, not per operation. `report` receives the warning of a
 * library that holds other code.
 */
export async function runScript(
  client: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
  report?: (message: string) => void,
): Promise<unknown> {
  const state = stateOf(client);
  const mode = state.mode === 'unchecked' ? await check(client, state, report) : state.mode;
  if (mode === 'function') {
    const fn = scriptCode().functionName[name];
    try {
      return await client.fcall(fn, keys.length, ...keys, ...args);
    } catch (err) {
      const msg = messageOf(err);
      if (/Function not found/i.test(msg)) {
        // Gone since the check (FUNCTION FLUSH, a restart without persistence, a new master): check again.
        state.mode = 'unchecked';
        if ((await check(client, state, report)) === 'function') return client.fcall(fn, keys.length, ...keys, ...args);
      } else if (/unknown command|NOPERM.*'fcall'/i.test(msg)) {
        // The server has no functions, or an ACL allows scripts but not FCALL.
        state.mode = 'script';
      } else {
        throw err;
      }
    }
  }
  return scriptCommand(client, name).call(client, keys.length, ...keys, ...args); // the call names its keys: an add of a flow across queues passes more
}
