import type { Command } from 'commander';
import type { Run } from '../run.js';

/** `relq resume <queue>`: leasing starts again. */
export function resumeCommand(program: Command, run: Run): void {
  program
    .command('resume')
    .description('let the workers of a paused queue lease again')
    .argument('<queue>', 'queue name')
    .action((name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        await (await ctx.existingQueue(name)).queue.resume();
        ctx.output.result({ queue: name, paused: false }, () => `resumed '${name}'`);
      }),
    );
}
