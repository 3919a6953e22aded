import { Option, type Command } from 'commander';
import { DEFAULT_PAGE_SIZE, MAX_MANAGED } from '../../core/defaults.js';
import { JOB_STATES } from '../../core/management/options.js';
import type { JobState } from '../../core/management/read-types.js';
import type { JobOrder } from '../../core/management/types.js';
import { intArg } from '../args.js';
import { table, time } from '../output.js';
import type { Run } from '../run.js';

/** The time of the job's state (column "when"): lease deadline, due time, end of retention or death. */
function when(job: { leaseDeadline?: number; runAt?: number; retainedUntil?: number; diedAt?: number }): string {
  return time(job.leaseDeadline ?? job.runAt ?? job.retainedUntil ?? job.diedAt);
}

/** `relq jobs <queue> --state <s>`: one page of the jobs in a state. */
export function jobsCommand(program: Command, run: Run): void {
  program
    .command('jobs')
    .description('one page of the jobs of a queue in a state')
    .argument('<queue>', 'queue name')
    .addOption(new Option('--state <state>', 'job state').choices(JOB_STATES).makeOptionMandatory())
    .option('--start <n>', 'first position, 0-based', intArg(0), 0)
    .option('--end <n>', `last position, inclusive (default start + ${DEFAULT_PAGE_SIZE - 1}; at most ${MAX_MANAGED} jobs)`, intArg(0))
    .addOption(new Option('--order <order>', 'asc: lease order, due time, deadline, retention or death; desc: reversed').choices(['asc', 'desc']).default('asc'))
    .action((name: string, opts: { state: JobState; start: number; end?: number; order: JobOrder }, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { queue } = await ctx.existingQueue(name);
        const jobs = await queue.getJobs(opts.state, { start: opts.start, end: opts.end, order: opts.order });
        ctx.output.result(jobs, () =>
          jobs.length === 0
            ? `no ${opts.state} jobs in '${name}' at positions ${opts.start} and on`
            : table(
                ['id', 'name', 'attempts', 'created', 'when', 'last error'],
                jobs.map((j) => [j.id, j.name, `${j.failures}/${j.maxAttempts}`, time(j.createdAt), when(j), j.lastError ?? '']),
              ),
        );
      }),
    );
}
