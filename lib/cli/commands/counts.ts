import type { Command } from 'commander';
import { fields } from '../output.js';
import type { Run } from '../run.js';

/** `relq counts <queue>`: jobs per state and the queue's flags. */
export function countsCommand(program: Command, run: Run): void {
  program
    .command('counts')
    .description('jobs of a queue per state')
    .argument('<queue>', 'queue name')
    .action((name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { counts } = await ctx.existingQueue(name);
        ctx.output.result(counts, () =>
          fields([
            ['pending', counts.pending],
            ['working', counts.working],
            ['delayed', counts.delayed],
            ['waiting-children', counts.waitingChildren],
            ['completed', counts.completed],
            ['dead', counts.dead],
            ['paused', counts.paused],
            ['rate-limited ms', counts.rateLimitedMs],
            ['rate-limited groups', counts.rateLimitedGroups],
            ['schedulers', counts.schedulers],
            ['schedulers overdue', counts.schedulersOverdue],
            ['ghosts', counts.ghosts],
          ]),
        );
      }),
    );
}
