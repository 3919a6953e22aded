import type { Command } from 'commander';
import type { QueueEvent } from '../../core/events/types.js';
import type { Run } from '../run.js';

/** One event as a line: time it arrived, type, job id, then what else it carries. */
function eventLine(e: QueueEvent): string {
  const { type, queue: _queue, id, ...rest } = e;
  const extra = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return [new Date().toISOString(), type.padEnd(9), id ?? '-', ...extra].join(' ');
}

/** `relq watch <queue>`: the queue's job events from every process, until Ctrl-C (exit 0). */
export function watchCommand(program: Command, run: Run): void {
  program
    .command('watch')
    .description("print a queue's job events from every process as they happen, until Ctrl-C")
    .argument('<queue>', 'queue name (it need not exist yet)')
    .action((name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        const { queue: q } = await ctx.anyQueue(name); // Redis reachable and the credentials good, or a typed error now
        await q.counts();
        await new Promise<void>((resolve) => {
          const sub = q.events().subscribe((e) => ctx.output.line(e, () => eventLine(e)));
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            sub.unsubscribe();
            resolve();
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
          if (!ctx.output.json) ctx.output.note(`watching '${name}' (Ctrl-C to stop)`);
        });
      }),
    );
}
