import type { Command } from 'commander';
import { deadLettersInBatches, withDeadLetterOptions, type DeadLetterOptions } from '../dead-letters.js';
import type { Run } from '../run.js';

/** `relq purge-dead <queue>`: delete dead letters for good, in batches. */
export function purgeDeadCommand(program: Command, run: Run): void {
  withDeadLetterOptions(program.command('purge-dead').description('delete dead letters for good (oldest first)')).action(
    (name: string, opts: DeadLetterOptions, cmd: Command) =>
      run(cmd, async (ctx) => {
        const ids = await deadLettersInBatches(ctx, await ctx.existingQueue(name), 'purge', opts);
        ctx.output.result({ queue: name, purged: ids.length, ids }, () => `purged ${ids.length} dead letter(s) of '${name}'`);
      }),
  );
}
