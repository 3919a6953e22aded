import type { Command } from 'commander';
import { PartitionedQueue } from '../../core/partitions/partitioned-queue.js';
import { MAX_TIMER_MS } from '../../core/defaults.js';
import { PARTITION_BUCKETS } from '../../core/partitions/layout.js';
import { intArg } from '../args.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Run } from '../run.js';

interface ResizeOpts {
  waitMs?: number;
}

/**
 * `relq resize <queue> <partitions>`: grows a partitioned queue live (PartitionedQueue.resize,
 * docs/scale-out.md "Changing the number of partitions") and waits for its handover; the same
 * command again, or any sweep, carries on a handover that outlived the wait.
 */
export function resizeCommand(program: Command, run: Run): void {
  program
    .command('resize')
    .description('grow a partitioned queue to more partitions, live; waits for the new partitions to lease')
    .argument('<queue>', 'queue name')
    .argument('<partitions>', 'the number of partitions it will have (more than now)', intArg(1, PARTITION_BUCKETS))
    .option('--wait-ms <ms>', 'how long to wait for the handover (default 30000; 0: start it and return)', intArg(0, MAX_TIMER_MS))
    .action((name: string, to: number, opts: ResizeOpts, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { waitMs } = opts;
        const { queue } = await ctx.existingQueue(name);
        if (!(queue instanceof PartitionedQueue)) {
          throw new CliError(`'${name}' is not a partitioned queue: only a queue made with partitions can be resized (docs/scale-out.md)`, EXIT.usage);
        }
        const r = await queue.resize(to, waitMs === undefined ? {} : { waitMs });
        ctx.output.result({ queue: name, ...r }, () =>
          r.handedOver
            ? `'${name}' has ${r.partitions} partitions (epoch ${r.epoch}); every partition leases`
            : `'${name}' has ${r.partitions} partitions (epoch ${r.epoch}); the new ones wait for the old ones' jobs of the keys they took (run it again, or let a sweep finish it)`,
        );
      }),
    );
}
