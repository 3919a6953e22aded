import type { Command } from 'commander';
import { listQueues } from '../../core/registry/registry.js';
import { table, time } from '../output.js';
import type { Run } from '../run.js';

/** `relq queues`: the queues of the prefix, from the registry of queue names. */
export function queuesCommand(program: Command, run: Run): void {
  program
    .command('queues')
    .description('list the queues of the prefix (those written since the registry began; docs/cli.md)')
    .action((_opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const list = await listQueues(ctx.connection, { prefix: ctx.prefix });
        ctx.output.result(list, () =>
          list.length === 0
            ? `no queues with prefix '${ctx.prefix}'`
            : list.some((q) => q.partitions !== undefined)
              ? table(['name', 'partitions', 'first seen'], list.map((q) => [q.name, q.partitions === undefined ? '' : String(q.partitions), time(q.firstSeen)]))
              : table(['name', 'first seen'], list.map((q) => [q.name, time(q.firstSeen)])),
        );
      }),
    );
}
