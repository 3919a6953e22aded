import type { Command } from 'commander';
import { deadLettersInBatches, withDeadLetterOptions, type DeadLetterOptions } from '../dead-letters.js';
import type { Run } from '../run.js';

/** `relq retry-dead <queue>`: move dead letters back to pending with fresh attempts, in batches. */
export function retryDeadCommand(program: Command, run: Run): void {
  withDeadLetterOptions(program.command('retry-dead').description('move dead letters back to pending with fresh attempts (oldest first)')).action(
    (name: string, opts: DeadLetterOptions, cmd: Command) =>
      run(cmd, async (ctx) => {
        const ids = await deadLettersInBatches(ctx, await ctx.existingQueue(name), 'retry', opts);
        ctx.output.result({ queue: name, retried: ids.length, ids }, () => `retried ${ids.length} dead letter(s) of '${name}'`);
      }),
  );
}
