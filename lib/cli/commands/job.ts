import type { Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import { fields, optTime, time } from '../output.js';
import { printable } from '../printable.js';
import type { Run } from '../run.js';
import type { JobInfo } from '../../core/management/read-types.js';
import type { FlowChildren } from '../../core/flows/types.js';

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
              ['deduplication id', job.deduplicationId],
              ['parent', job.parent === undefined ? undefined : `${job.parent.id} in queue ${job.parent.queue}`],
              ['children', job.children === undefined ? undefined : childrenText(job.children)],
              ['attempts', `${attempts(job)}, leased ${job.dequeues} time(s), requeued ${job.requeues}`],
              ['retried', job.retries === undefined ? undefined : `${job.retries} time(s)`],
              ['created', time(job.createdAt)],
              ['processed', optTime(job.processedOn)],
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

/** A flow parent's children: how many it waits for, and how the others ended. */
function childrenText(c: FlowChildren): string {
  const failed = Object.keys(c.failed).length;
  return `${c.unfinished} unfinished, ${Object.keys(c.results).length} completed${failed > 0 ? `, ${failed} failed and gone on without` : ''}`;
}

/**
 * Where a job is in its attempt budget. A retry (or a redrive of its dead letter) gave it a
 * fresh one: its attempts count from there, the failures before it said apart.
 */
function attempts(job: JobInfo<unknown, unknown>): string {
  const before = job.failuresBeforeRedrive ?? 0;
  const used = job.failures - before;
  const of = `of ${job.maxAttempts}`;
  let text: string;
  if (job.state === 'working') text = `attempt ${used + 1} ${of} running`;
  else if (job.state === 'completed') text = `completed at attempt ${used + 1} ${of}`;
  else if (job.state === 'dead') text = `${used} failed ${of}`;
  else text = `attempt ${used + 1} ${of} next`;
  return before ? `${text} (${before} failed before the last retry)` : text;
}
