import { Option, type Command } from 'commander';
import { DEFAULT_DEAD_LETTER_BATCH, MAX_MANAGED } from '../core/defaults.js';
import type { Queue } from '../core/queue/queue.js';
import { intArg } from './args.js';
import type { CliContext, ExistingQueue } from './context.js';
import { progressBar } from './progress.js';
import type { Run } from './run.js';

interface DeadLetterOptions {
  id?: string[];
  name?: string;
  olderThan?: number;
  limit?: number;
  batch: number;
}

/** What tells retry-dead and purge-dead apart: the command, its help, the engine call and its words. */
interface DeadLetterOp {
  command: string;
  description: string;
  call: (q: ExistingQueue['queue'], target: Parameters<Queue['retryDead']>[0]) => Promise<string[]>;
  /** The progress bar's label. */
  doing: string;
  /** The result's count field, and the verb of its text. */
  done: string;
}

const RETRY: DeadLetterOp = {
  command: 'retry-dead',
  description: 'move dead letters back to pending with fresh attempts (oldest first)',
  call: (q, target) => q.retryDead(target),
  doing: 'retrying',
  done: 'retried',
};

const PURGE: DeadLetterOp = {
  command: 'purge-dead',
  description: 'delete dead letters for good (oldest first)',
  call: (q, target) => q.purgeDead(target),
  doing: 'purging',
  done: 'purged',
};

/** `relq retry-dead <queue>`: move dead letters back to pending with fresh attempts, in batches. */
export const retryDeadCommand = deadLetterCommand(RETRY);

/** `relq purge-dead <queue>`: delete dead letters for good, in batches. */
export const purgeDeadCommand = deadLetterCommand(PURGE);

/** The command of `op`, with the filters retryDead / purgeDead take and the batch size. */
function deadLetterCommand(op: DeadLetterOp): (program: Command, run: Run) => void {
  return (program, run) => {
    program
      .command(op.command)
      .description(op.description)
      .argument('<queue>', 'queue name')
      // a conflict is a usage error from commander, found before Redis is contacted
      .addOption(new Option('--id <id...>', 'only these dead letters (not with the filters)').conflicts(['name', 'olderThan', 'limit']))
      .option('--name <name>', "only jobs of this name ('' for jobs added without one)")
      .option('--older-than <ms>', 'only jobs that died at least this long ago (Redis clock)', intArg(0))
      .option('--limit <n>', 'at most this many (default: every dead letter there was when the command began)', intArg(1))
      .option('--batch <n>', `dead letters per atomic call (1 to ${MAX_MANAGED})`, intArg(1, MAX_MANAGED), DEFAULT_DEAD_LETTER_BATCH)
      .action((name: string, opts: DeadLetterOptions, cmd: Command) =>
        run(cmd, async (ctx) => {
          const ids = await deadLettersInBatches(ctx, await ctx.existingQueue(name), op, opts);
          ctx.output.result({ queue: name, [op.done]: ids.length, ids }, () => `${op.done} ${ids.length} dead letter(s) of '${name}'`);
        }),
      );
  };
}

/**
 * Retries or purges dead letters in batches: each batch is one atomic call of the engine
 * (retryDead / purgeDead), the oldest first, so a large dead-letter set never blocks Redis
 * for long and the progress bar moves. Without --limit it handles at most the dead letters
 * counted when it began: jobs that die again meanwhile are not taken twice.
 */
async function deadLettersInBatches(ctx: CliContext, { queue, counts }: ExistingQueue, op: DeadLetterOp, o: DeadLetterOptions): Promise<string[]> {
  const done: string[] = [];
  if (o.id) {
    const bar = progressBar(op.doing, o.id.length, ctx.output.json);
    try {
      for (let i = 0; i < o.id.length; i += o.batch) {
        done.push(...(await op.call(queue, o.id.slice(i, i + o.batch))));
        bar.update(Math.min(i + o.batch, o.id.length));
      }
    } finally {
      bar.stop();
    }
    return done;
  }
  const total = Math.min(o.limit ?? counts.dead, counts.dead);
  const bar = progressBar(op.doing, total, ctx.output.json);
  try {
    while (done.length < total) {
      const n = Math.min(o.batch, total - done.length);
      const moved = await op.call(queue, { limit: n, name: o.name, olderThanMs: o.olderThan });
      done.push(...moved);
      bar.update(done.length);
      if (moved.length < n) break; // no more that pass the filter
    }
  } finally {
    bar.stop();
  }
  return done;
}
