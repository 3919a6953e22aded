import { Option, type Command } from 'commander';
import { MAX_MANAGED } from '../core/queue/management-options.js';
import type { Queue } from '../core/queue/queue.js';
import { intArg } from './args.js';
import type { CliContext, ExistingQueue } from './context.js';
import { progressBar } from './progress.js';

export interface DeadLetterOptions {
  id?: string[];
  name?: string;
  olderThan?: number;
  limit?: number;
  batch: number;
}

/** The options of retry-dead and purge-dead: the filters retryDead / purgeDead take, and the batch size. */
export function withDeadLetterOptions(cmd: Command): Command {
  return cmd
    .argument('<queue>', 'queue name')
    // a conflict is a usage error from commander, found before Redis is contacted
    .addOption(new Option('--id <id...>', 'only these dead letters (not with the filters)').conflicts(['name', 'olderThan', 'limit']))
    .option('--name <name>', "only jobs of this name ('' for jobs added without one)")
    .option('--older-than <ms>', 'only jobs that died at least this long ago (Redis clock)', intArg(0))
    .option('--limit <n>', 'at most this many (default: every dead letter there was when the command began)', intArg(1))
    .option('--batch <n>', `dead letters per atomic call (1 to ${MAX_MANAGED})`, intArg(1, MAX_MANAGED), 1000);
}

/**
 * Retries or purges dead letters in batches: each batch is one atomic call of the engine
 * (retryDead / purgeDead), the oldest first, so a large dead-letter set never blocks Redis
 * for long and the progress bar moves. Without --limit it handles at most the dead letters
 * counted when it began: jobs that die again meanwhile are not taken twice.
 */
export async function deadLettersInBatches(
  ctx: CliContext,
  { queue: q, counts }: ExistingQueue,
  op: 'retry' | 'purge',
  o: DeadLetterOptions,
): Promise<string[]> {
  const call = (target: Parameters<Queue['retryDead']>[0]) => (op === 'retry' ? q.retryDead(target) : q.purgeDead(target));
  const label = op === 'retry' ? 'retrying' : 'purging';
  const done: string[] = [];
  if (o.id) {
    const bar = progressBar(label, o.id.length, ctx.output.json);
    try {
      for (let i = 0; i < o.id.length; i += o.batch) {
        done.push(...(await call(o.id.slice(i, i + o.batch))));
        bar.update(Math.min(i + o.batch, o.id.length));
      }
    } finally {
      bar.stop();
    }
    return done;
  }
  const total = Math.min(o.limit ?? counts.dead, counts.dead);
  const bar = progressBar(label, total, ctx.output.json);
  try {
    while (done.length < total) {
      const n = Math.min(o.batch, total - done.length);
      const moved = await call({ limit: n, name: o.name, olderThanMs: o.olderThan });
      done.push(...moved);
      bar.update(done.length);
      if (moved.length < n) break; // no more that pass the filter
    }
  } finally {
    bar.stop();
  }
  return done;
}
