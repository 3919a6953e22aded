import type { Command } from 'commander';
import type { Redactor } from '../core/redis/redact.js';
import { RelqError } from '../core/errors.js';
import { CliContext, type GlobalOptions } from './context.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

/** A command's work: its exit code (default 0). */
export type Action = (ctx: CliContext) => Promise<number | void>;

/** Runs an action of `command` with its own context, closed afterwards; resolves to the exit code. */
export type Run = (command: Command, action: Action) => Promise<void>;

/** The runner commands register with, and the exit code of the one that ran; its output masks what `redactor` knows. */
export function runner(redactor: Redactor): { run: Run; exitCode: () => number } {
  let code: number = EXIT.ok;
  const run: Run = async (command, action) => {
    const ctx = new CliContext(command.optsWithGlobals<GlobalOptions>(), redactor);
    try {
      code = (await action(ctx)) ?? EXIT.ok;
    } catch (err) {
      code = exitCodeOf(err);
      ctx.output.error({ code: err instanceof RelqError ? err.code : undefined, message: err instanceof Error ? err.message : String(err) }, code);
    } finally {
      await ctx.close();
    }
  };
  return { run, exitCode: () => code };
}
