import type { Command } from 'commander';
import type { Run } from '../run.js';

/** `relq pause <queue>`: workers of every process stop leasing; adds go on. */
export function pauseCommand(program: Command, run: Run): void {
  program
    .command('pause')
    .description('stop leasing on every worker of a queue (adds go on)')
    .argument('<queue>', 'queue name')
    .action((name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        await (await ctx.existingQueue(name)).queue.pause();
        ctx.output.result({ queue: name, paused: true }, () => `paused '${name}'`);
      }),
    );
}
