import { libraryNodes, libraryStateOn, loadLibraryOn, nodeName, type FunctionLibraryState } from './function-library.js';
import { withConnection } from './one-off.js';
import { scriptCode } from './script-code.js';
import type { ConnectionInput } from './types.js';

export type { FunctionLibraryState } from './function-library.js';

/** relq's function library on each master of a server (or Cluster). */
export interface FunctionLibraryStatus {
  /** This relq version's library: `relq_<hash of its code>`. */
  library: string;
  /**
   * Per master (`host:port`): `loaded` (this version's code), `missing`, or `different` (other
   * code under relq's library name: relq does not call it).
   */
  nodes: Array<{ node: string; state: FunctionLibraryState }>;
}

/** What loadFunctionLibrary() found on each master before it loaded the library there. */
export interface FunctionLibraryLoad {
  library: string;
  /** Per master: its state before (`loaded`: left as it was; `missing`, `different`: loaded now). */
  nodes: Array<{ node: string; was: FunctionLibraryState }>;
}

/**
 * Where this relq version's function library is loaded, read on every master (FUNCTION LIST
 * ... WITHCODE, compared with this version's code). The user needs `+function|list`. Closes a
 * connection it opened; a client passed in stays open.
 */
export function functionLibraryStatus(connection?: ConnectionInput): Promise<FunctionLibraryStatus> {
  return withConnection('functionLibraryStatus', connection, async ({ client }) => {
    const nodes = await libraryNodes(client);
    const states = await Promise.all(
      nodes.map(async (n) => {
        const state = await libraryStateOn(n);
        return { node: nodeName(n), state }; // named once connected: the address it reached
      }),
    );
    return { library: scriptCode().libraryName, nodes: states };
  });
}

/**
 * Loads this relq version's function library on every master where it is missing or holds
 * other code (FUNCTION LOAD REPLACE): the deploy step for servers whose app users may not load
 * functions (the README's ACL line). Resolves to the state each master was in before. The user
 * needs `+function|list +function|load`: an administrator. Closes a connection it opened.
 */
export function loadFunctionLibrary(connection?: ConnectionInput): Promise<FunctionLibraryLoad> {
  return withConnection('loadFunctionLibrary', connection, async ({ client }) => {
    const nodes = await libraryNodes(client);
    const before = await Promise.all(
      nodes.map(async (n) => {
        const was = await libraryStateOn(n);
        if (was !== 'loaded') await loadLibraryOn(n, true);
        return { node: nodeName(n), was };
      }),
    );
    return { library: scriptCode().libraryName, nodes: before };
  });
}
