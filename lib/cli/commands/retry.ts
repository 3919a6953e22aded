import type { Command } from 'commander';
import { JobNotRetryableError } from '../../core/management/errors.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Run } from '../run.js';

/** `relq retry <queue> <id>`: a completed or dead job runs again, with a fresh attempt budget. */
export function retryCommand(program: Command, run: Run): void {
  program
    .command('retry')
    .description('run a completed or dead job again, with a fresh attempt budget')
    .argument('<queue>', 'queue name')
    .argument('<id>', 'job id')
    .action((name: string, id: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { queue } = await ctx.existingQueue(name);
        let from: 'completed' | 'dead';
        try {
          from = await queue.retry(id);
        } catch (err) {
          // no such job: the exit code of a missing job; one that has not finished: a refused operation
          if (err instanceof JobNotRetryableError && err.state === undefined) throw new CliError(err.message, EXIT.notFound);
          throw err;
        }
        ctx.output.result({ queue: name, id, retried: from }, () => `retried ${from} job '${id}' of '${name}': pending, with a fresh attempt budget`);
      }),
    );
}
