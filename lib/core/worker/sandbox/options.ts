import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_SANDBOX_IDLE_MS, DEFAULT_SANDBOX_KILL_AFTER_MS, MAX_TIMER_MS } from '../../defaults.js';
import { ValidationError } from '../../errors.js';
import { assertInt, assertOptions, assertString, describe } from '../../validate.js';

/**
 * A module that exports a handler (`export default async (job) => ...`), run in a sandbox:
 * a `file:` URL (`new URL('./handler.js', import.meta.url)`) or an absolute path.
 */
export type HandlerFile = URL | string;

/** Where a handler file runs, and the bounds of its children (docs/sandbox.md). */
export interface SandboxOptions {
  /** 'thread' (default): worker threads of this process. 'process': child processes of their own. */
  kind?: 'thread' | 'process';
  /**
   * Largest heap of each child in MB (a thread's `resourceLimits.maxOldGenerationSizeMb`, a
   * process's `--max-old-space-size`): a handler that needs more fails its attempt and its
   * child is replaced. Default: Node's.
   */
  maxMemoryMb?: number;
  /** A child idle this long is retired (the next job starts a new one). Default 30 s. */
  idleMs?: number;
  /**
   * Once a job's signal aborts (timeout, cancel, lease lost, shutdown), its child is told and
   * has this long to end the job; then it is killed and replaced. Default 1 s.
   */
  killAfterMs?: number;
  /**
   * Node options of each child (e.g. `['--import', 'tsx']` for a TypeScript handler file).
   * Default: a thread inherits this process's; a process gets none (an inspector port, say,
   * would clash with this process's).
   */
  execArgv?: string[];
}

/** The options with their defaults, and the handler file as a URL. */
export interface SandboxSettings {
  readonly file: string;
  readonly kind: 'thread' | 'process';
  readonly maxMemoryMb: number | undefined;
  readonly idleMs: number;
  readonly killAfterMs: number;
  readonly execArgv: string[] | undefined;
}

const SANDBOX_OPTION_KEYS = ['kind', 'maxMemoryMb', 'idleMs', 'killAfterMs', 'execArgv'] as const;

/** The one check of a handler file: a `file:` URL or an absolute path, of a file that exists. Returns its URL. */
export function handlerFileUrl(field: string, file: unknown): string {
  let path: string;
  if (file instanceof URL) {
    if (file.protocol !== 'file:') throw new ValidationError(field, `must be a file: URL, got ${file.protocol} (new URL('./handler.js', import.meta.url))`);
    path = fileURLToPath(file);
  } else if (typeof file === 'string') {
    if (!isAbsolute(file)) throw new ValidationError(field, `must be an absolute path or a file: URL (new URL('./handler.js', import.meta.url)), got ${describe(file)}`);
    path = file;
  } else {
    throw new ValidationError(field, `must be a function, or a handler file (a file: URL or an absolute path), got ${describe(file)}`);
  }
  if (!existsSync(path)) throw new ValidationError(field, `names no file: ${path}`);
  return pathToFileURL(path).href;
}

/** The one check of the sandbox options (`field` names where they were given). */
export function assertSandboxOptions(field: string, o: SandboxOptions): void {
  assertOptions(field, o, SANDBOX_OPTION_KEYS);
  if (o.kind !== undefined && o.kind !== 'thread' && o.kind !== 'process') {
    throw new ValidationError(`${field}.kind`, `must be 'thread' or 'process', got ${describe(o.kind)}`);
  }
  if (o.maxMemoryMb !== undefined) assertInt(`${field}.maxMemoryMb`, o.maxMemoryMb, { min: 1, max: 1_048_576 });
  if (o.idleMs !== undefined) assertInt(`${field}.idleMs`, o.idleMs, { min: 1, max: MAX_TIMER_MS });
  if (o.killAfterMs !== undefined) assertInt(`${field}.killAfterMs`, o.killAfterMs, { max: MAX_TIMER_MS });
  if (o.execArgv !== undefined) {
    if (!Array.isArray(o.execArgv)) throw new ValidationError(`${field}.execArgv`, `must be an array of strings, got ${describe(o.execArgv)}`);
    o.execArgv.forEach((arg, i) => assertString(`${field}.execArgv[${i}]`, arg));
  }
}

/** The settings of a checked handler file and sandbox options. */
export function sandboxSettings(file: string, o: SandboxOptions): SandboxSettings {
  return {
    file,
    kind: o.kind ?? 'thread',
    maxMemoryMb: o.maxMemoryMb,
    idleMs: o.idleMs ?? DEFAULT_SANDBOX_IDLE_MS,
    killAfterMs: o.killAfterMs ?? DEFAULT_SANDBOX_KILL_AFTER_MS,
    execArgv: o.execArgv && [...o.execArgv],
  };
}
