import type { Command } from 'commander';
import { table, time } from '../output.js';
import type { Run } from '../run.js';

/** `relq workers <queue>`: the queue's live workers (queue.getWorkers()). */
export function workersCommand(program: Command, run: Run): void {
  program
    .command('workers')
    .description('the live workers of a queue: host, pid, app, concurrency and running jobs as of their last registration')
    .argument('<queue>', 'queue name')
    .action((name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        // no existingQueue(): workers may wait on a queue that never held a job
        const workers = await (await ctx.anyQueue(name)).queue.getWorkers();
        ctx.output.result(workers, () =>
          workers.length === 0
            ? `no live workers on '${name}' with prefix '${ctx.prefix}'`
            : table(
                ['host', 'pid', 'app', 'concurrency', 'running', 'started', 'last seen'],
                workers.map((w) => [w.host, w.pid, w.appName ?? '', w.concurrency, w.running, time(w.startedAt), time(w.lastSeenAt)]),
              ),
        );
      }),
    );
}
