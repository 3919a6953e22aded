import type { Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import { fields, optTime, time } from '../output.js';
import { printable } from '../printable.js';
import type { Run } from '../run.js';

const json = (v: unknown): string | undefined => (v === undefined ? undefined : JSON.stringify(v));

/** `relq job <queue> <id>`: one job, with its data, result, progress and log. */
export function jobCommand(program: Command, run: Run): void {
  program
    .command('job')
    .description('one job of a queue')
    .argument('<queue>', 'queue name')
    .argument('<id>', 'job id')
    .action((name: string, id: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const job = await (await ctx.existingQueue(name)).queue.getJob(id);
        if (!job) throw new CliError(`no job '${id}' in queue '${name}'`, EXIT.notFound);
        ctx.output.result(job, () =>
          [
            fields([
              ['id', job.id],
              ['name', job.name],
              ['state', job.state],
              ['priority', job.priority],
              ['group', job.group],
              ['attempts', `${job.failures} failed of ${job.maxAttempts}, leased ${job.dequeues} time(s), requeued ${job.requeues}`],
              ['created', time(job.createdAt)],
              ['lease deadline', optTime(job.leaseDeadline)],
              ['runs at', optTime(job.runAt)],
              ['completed', optTime(job.completedAt)],
              ['kept until', optTime(job.retainedUntil)],
              ['died', optTime(job.diedAt)],
              ['last error', job.lastError],
              ['progress', json(job.progress)],
              ['data', json(job.data)],
              ['result', json(job.result)],
            ]),
            ...(job.logs?.length ? ['log:', ...job.logs.map((l) => `  ${printable(l)}`)] : []),
          ].join('\n'),
        );
      }),
    );
}
