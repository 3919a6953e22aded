import type { Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import type { Run } from '../run.js';

/** `relq cancel <queue> <id>`: a waiting job removed, a running one's lease ended (dead, or retried with --retry). */
export function cancelCommand(program: Command, run: Run): void {
  program
    .command('cancel')
    .description('cancel a job: a waiting one is removed, a running one is dead-lettered (or retried) and its handler aborted')
    .argument('<queue>', 'queue name')
    .argument('<id>', 'job id')
    .option('--retry', 'a running job fails its attempt instead, and runs again after its backoff (dead when no attempts remain)')
    .option('--reason <text>', "why: in the job's error and the handler's abort reason")
    .action((name: string, id: string, opts: { retry?: boolean; reason?: string }, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { queue } = await ctx.existingQueue(name);
        const done = await queue.cancel(id, { outcome: opts.retry ? 'retry' : 'dead', ...(opts.reason === undefined ? {} : { reason: opts.reason }) });
        if (done === false) {
          // nothing written either way: a finished job is a refused operation, a missing one is not found
          const job = await queue.getJob(id);
          if (job) throw new CliError(`job '${id}' of '${name}' is ${job.state}: there is nothing to cancel`, EXIT.failed);
          throw new CliError(`no job '${id}' in queue '${name}'`, EXIT.notFound);
        }
        const what = done === 'removed' ? 'removed (it was not running)' : done === 'dead' ? 'dead-lettered, its handler aborted' : 'retried as a failed attempt, its handler aborted';
        ctx.output.result({ queue: name, id, cancelled: done }, () => `cancelled job '${id}' of '${name}': ${what}`);
      }),
    );
}
