import { CommanderError } from 'commander';
import { AuthenticationError, ConnectionError, PermissionError, ValidationError } from '../core/errors.js';

/** The CLI's exit codes (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** The operation failed (a Redis error, a refused operation). */
  failed: 1,
  /** Bad command line: unknown command or option, bad value. */
  usage: 2,
  /** Redis cannot be reached or is not serving. */
  unreachable: 3,
  /** No such queue or job. */
  notFound: 4,
  /** Redis refused the credentials or the ACL user's permissions. */
  refused: 5,
} as const;

/** A failure of the CLI itself, with the exit code it ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  // --help and --version end with commander's 0; everything else it stops on (no command,
  // unknown command or option, bad value) is a usage error
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof ValidationError) return EXIT.usage;
  if (err instanceof AuthenticationError || err instanceof PermissionError) return EXIT.refused;
  if (err instanceof ConnectionError) return EXIT.unreachable;
  return EXIT.failed;
}
