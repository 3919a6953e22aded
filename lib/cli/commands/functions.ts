import type { Command } from 'commander';
import { functionLibraryStatus, loadFunctionLibrary, type FunctionLibraryState } from '../../core/redis/functions.js';
import { EXIT } from '../exit-codes.js';
import { table } from '../output.js';
import type { Run } from '../run.js';

/** What `status` says of a master's state. */
const SHOWN: Record<FunctionLibraryState, string> = {
  loaded: 'loaded',
  missing: 'missing (relq runs scripts there)',
  different: 'DIFFERENT CODE under this name (relq does not call it; `relq functions load` replaces it)',
};

/** What `load` did on a master, by the state it found. */
const DONE: Record<FunctionLibraryState, string> = {
  loaded: 'already loaded',
  missing: 'loaded',
  different: 'loaded, over different code that was under this name',
};

/**
 * `relq functions load` and `relq functions status`: this relq version's function library on
 * every master, for servers whose app users may not load functions (docs/cli.md).
 */
export function functionsCommand(program: Command, run: Run): void {
  const functions = program.command('functions').description("relq's function library on the server: load it (an administrator's step), or show where it is loaded");
  functions
    .command('status')
    .description('show on every master whether this version of the library is loaded (exit 1 if not everywhere)')
    .action((_opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const status = await functionLibraryStatus(ctx.connection);
        ctx.output.result(status, () => `library ${status.library}\n${table(['node', 'state'], status.nodes.map((n) => [n.node, SHOWN[n.state]]))}`);
        return status.nodes.every((n) => n.state === 'loaded') ? EXIT.ok : EXIT.failed;
      }),
    );
  functions
    .command('load')
    .description('load this version of the library on every master where it is missing or different (needs FUNCTION LOAD)')
    .action((_opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const before = await loadFunctionLibrary(ctx.connection);
        ctx.output.result(before, () => `library ${before.library}\n${table(['node', 'done'], before.nodes.map((n) => [n.node, DONE[n.was]]))}`);
      }),
    );
}
