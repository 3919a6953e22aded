import type { Command } from 'commander';
import type { GroupOverride } from '../../core/settings/concurrency.js';
import type { RateLimit } from '../../core/rate-limits/types.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Run } from '../run.js';

interface ConcurrencyOpts {
  group?: string;
  rate?: string;
  clear?: boolean;
}

/** A whole number as typed; anything else is a usage error before anything is written. */
function count(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new CliError(`${what} must be a whole number, got '${text}'`, EXIT.usage);
  return Number(text);
}

/** '<max>/<durationMs>', e.g. 10/1000. */
function rate(text: string): RateLimit {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) throw new CliError(`--rate must be <max>/<durationMs>, e.g. 10/1000, got '${text}'`, EXIT.usage);
  return { max: Number(m[1]), durationMs: Number(m[2]) };
}

function describeRate(r: RateLimit | undefined): string {
  return r ? `${r.max} per ${r.durationMs} ms` : '-';
}

/**
 * `relq concurrency <queue> [limit]`: shows or sets the queue-wide concurrency (0 removes it),
 * and with --group a group's own limits (--rate for its rate limit, --clear to remove them).
 */
export function concurrencyCommand(program: Command, run: Run): void {
  program
    .command('concurrency')
    .description("show or set a queue's concurrency across all workers (0 removes it), or with --group one group's own limits")
    .argument('<queue>', 'queue name')
    .argument('[limit]', 'most jobs leased at once: the whole queue, or the --group')
    .option('--group <group>', "set this group's own limits in place of groupConcurrency / groupLimiter")
    .option('--rate <max/ms>', "with --group: the group's own rate limit, e.g. 10/1000")
    .option('--clear', "with --group: remove the group's own limits")
    .action((name: string, limit: string | undefined, opts: ConcurrencyOpts, cmd: Command) =>
      run(cmd, async (ctx) => {
        if (opts.group === undefined && (opts.rate !== undefined || opts.clear)) {
          throw new CliError('--rate and --clear go with --group', EXIT.usage);
        }
        if (opts.clear && (limit !== undefined || opts.rate !== undefined)) {
          throw new CliError('--clear takes no limit or --rate', EXIT.usage);
        }
        const { queue } = await ctx.existingQueue(name);
        if (opts.group !== undefined) {
          const group = opts.group;
          if (opts.clear) {
            await queue.setGroupOverride(group, null);
            ctx.output.result({ queue: name, group, override: null }, () => `group '${group}' of '${name}' follows the queue's group limits again`);
            return;
          }
          if (limit !== undefined || opts.rate !== undefined) {
            const override: GroupOverride = {};
            if (limit !== undefined) override.concurrency = count(limit, 'limit');
            if (opts.rate !== undefined) override.limiter = rate(opts.rate);
            await queue.setGroupOverride(group, override);
          }
          const now = (await queue.getGroupOverrides())[group] ?? null;
          ctx.output.result({ queue: name, group, override: now }, () =>
            now
              ? `group '${group}' of '${name}': concurrency ${now.concurrency ?? '-'}, rate ${describeRate(now.limiter)}`
              : `group '${group}' of '${name}' has no limits of its own`,
          );
          return;
        }
        if (limit !== undefined) await queue.setGlobalConcurrency(count(limit, 'limit'));
        const state = await queue.queueState();
        const groups = Object.entries(state.groupOverrides);
        ctx.output.result(
          { queue: name, globalConcurrency: state.globalConcurrency, groupConcurrency: state.groupConcurrency, groupOverrides: state.groupOverrides },
          () =>
            [
              `'${name}': global concurrency ${state.globalConcurrency || 'none'}, per group ${state.groupConcurrency || 'none'}`,
              ...groups.map(([g, o]) => `  group '${g}': concurrency ${o.concurrency ?? '-'}, rate ${describeRate(o.limiter)}`),
            ].join('\n'),
        );
      }),
    );
}
