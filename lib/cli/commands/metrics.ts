import { InvalidArgumentError, type Command } from 'commander';
import type { RunTimeQuantiles } from '../../core/metrics-history/types.js';
import { fields, table, time } from '../output.js';
import type { Run } from '../run.js';

/** A time on the command line: epoch ms, or an ISO 8601 date (a bad one is a usage error, exit 2). */
function timeArg(value: string): number {
  const ms = /^\d+$/.test(value.trim()) ? Number(value) : Date.parse(value);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidArgumentError(`expected epoch ms or an ISO 8601 time, got '${value}'`);
  return ms;
}

function runTime(r: RunTimeQuantiles): string {
  return r.count === 0 ? '' : `${r.p50} / ${r.p95} / ${r.p99}`;
}

/** `relq metrics <queue>`: the queue's metrics history, per minute (queue option `metrics`). */
export function metricsCommand(program: Command, run: Run): void {
  program
    .command('metrics')
    .description('per-minute completed, failed and dead attempts and run times of a queue that keeps a metrics history')
    .argument('<queue>', 'queue name')
    .option('--from <time>', 'first minute: epoch ms or ISO 8601 (default: an hour before --to)', timeArg)
    .option('--to <time>', 'last minute: epoch ms or ISO 8601 (default: now)', timeArg)
    .action((name: string, opts: { from?: number; to?: number }, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { queue } = await ctx.existingQueue(name);
        const history = await queue.getMetrics({ from: opts.from, to: opts.to });
        ctx.output.result(history, () => {
          if (history.keepMinutes === 0 && history.total.completed + history.total.failed + history.total.dead === 0) {
            return `'${name}' keeps no metrics history (queue option metrics)`;
          }
          // the minutes that saw something: an idle hour is one line, not sixty
          const busy = history.points.filter((p) => p.completed + p.failed + p.dead > 0);
          const { total } = history;
          return [
            busy.length === 0
              ? 'no attempts ended in this range'
              : table(
                  ['minute', 'completed', 'failed', 'dead', 'run ms p50 / p95 / p99'],
                  busy.map((p) => [time(p.at), p.completed, p.failed, p.dead, runTime(p.runTime)]),
                ),
            '',
            fields([
              ['kept minutes', history.keepMinutes],
              ['completed', total.completed],
              ['failed', total.failed],
              ['dead', total.dead],
              ['run ms p50 / p95 / p99', runTime(total.runTime) || undefined],
            ]),
          ].join('\n');
        });
      }),
    );
}
