import { Command, CommanderError } from 'commander';
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL } from '../core/defaults.js';
import { Redactor } from '../core/redis/redact.js';
import { cancelCommand } from './commands/cancel.js';
import { concurrencyCommand } from './commands/concurrency.js';
import { countsCommand } from './commands/counts.js';
import { functionsCommand } from './commands/functions.js';
import { jobCommand } from './commands/job.js';
import { jobsCommand } from './commands/jobs.js';
import { metricsCommand } from './commands/metrics.js';
import { pauseCommand, resumeCommand } from './commands/pause.js';
import { queuesCommand } from './commands/queues.js';
import { resizeCommand } from './commands/resize.js';
import { retryCommand } from './commands/retry.js';
import { watchCommand } from './commands/watch.js';
import { workersCommand } from './commands/workers.js';
import { passwordOf } from './context.js';
import { purgeDeadCommand, retryDeadCommand } from './dead-letters.js';
import { exitCodeOf } from './exit-codes.js';
import { Output } from './output.js';
import { printableLines } from './printable.js';
import { runner } from './run.js';

const COMMANDS = [queuesCommand, countsCommand, metricsCommand, jobsCommand, jobCommand, retryCommand, cancelCommand, retryDeadCommand, purgeDeadCommand, pauseCommand, resumeCommand, concurrencyCommand, resizeCommand, watchCommand, workersCommand, functionsCommand];

/** Every --redis value on the command line (commander keeps the last), before commander parses them: secrets from the start. */
function redisArgs(argv: string[]): Array<string | undefined> {
  return argv.flatMap((a, i) => (a === '--redis' ? [argv[i + 1]] : a.startsWith('--redis=') ? [a.slice('--redis='.length)] : []));
}

/** Runs the CLI on `argv` (process.argv form) and resolves to its exit code (docs/cli.md). */
export async function runCli(argv: string[]): Promise<number> {
  // the one redactor of the run: commander's messages and every command's output go through it
  const redactor = new Redactor([...redisArgs(argv).map(passwordOf), passwordOf(process.env.REDIS_URL)]);
  const { run, exitCode } = runner(redactor);
  const program = new Command('relq')
    .description('Look at and operate relq queues on Redis.')
    .option('--redis <url>', `Redis URL (default: $REDIS_URL, then ${DEFAULT_REDIS_URL})`)
    .option('--prefix <prefix>', 'key prefix of the queues', DEFAULT_PREFIX)
    .option('--json', 'machine-readable output: JSON on stdout (errors as JSON on stderr)')
    .option('--cluster', 'Redis Cluster: --redis names one of its nodes')
    .showHelpAfterError('(relq --help lists the commands)')
    .configureOutput({
      writeOut: (s) => process.stdout.write(printableLines(redactor.text(s))),
      writeErr: (s) => process.stderr.write(printableLines(redactor.text(s))),
    })
    .exitOverride();
  for (const register of COMMANDS) register(program, run);
  try {
    await program.parseAsync(argv);
    return exitCode();
  } catch (err) {
    // commander has written its own message (usage errors, help); anything else is ours to report
    if (!(err instanceof CommanderError)) {
      new Output(argv.includes('--json'), redactor).error({ message: err instanceof Error ? err.message : String(err) }, exitCodeOf(err));
    }
    return exitCodeOf(err);
  }
}
