import type { Command } from 'commander';
import type { Run } from '../run.js';

/** `relq pause <queue>`: workers of every process stop leasing; adds go on. */
export const pauseCommand = pauseFlagCommand('pause', 'stop leasing on every worker of a queue (adds go on)', 'paused');

/** `relq resume <queue>`: leasing starts again. */
export const resumeCommand = pauseFlagCommand('resume', 'let the workers of a paused queue lease again', 'resumed');

/** The command that sets (pause) or clears (resume) a queue's pause, which every process's workers obey. */
function pauseFlagCommand(command: 'pause' | 'resume', description: string, done: string): (program: Command, run: Run) => void {
  return (program, run) => {
    program
      .command(command)
      .description(description)
      .argument('<queue>', 'queue name')
      .action((name: string, _opts: unknown, cmd: Command) =>
        run(cmd, async (ctx) => {
          await (await ctx.existingQueue(name)).queue[command]();
          ctx.output.result({ queue: name, paused: command === 'pause' }, () => `${done} '${name}'`);
        }),
      );
  };
}
