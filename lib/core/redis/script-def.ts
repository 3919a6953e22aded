import type { QueueKeys } from './keys.js';

/** One ARGV value of a call, as Redis receives it. */
export type ScriptArg = string | number;

/** The `events` argument of most calls: '1' to publish job events (someone listens), '0' not. */
export type EventsFlag = '0' | '1';

/** An add's events flag; a partition's producer adds the epoch of the map it routed with (partitions/epoch-fence.lua). */
export type AddFlag = EventsFlag | `${EventsFlag}:${number}`;

/**
 * One Lua operation, defined once beside its feature's code: its file, its keys, how a call's
 * named arguments become its ARGV (in the order of the file's header, checked by
 * test/core/script-headers.spec.ts) and how its reply becomes a typed result.
 */
export interface ScriptDef<Name extends string, Args, Result, Op extends string> {
  /** Its function in the library (`relq_<hash>_<name>`), its command name as a script. */
  readonly name: Name;
  /** The Lua file, from lib/core/. */
  readonly file: string;
  /** The labels its errors carry (`relq <op>: ...`): the first unless the call names another. */
  readonly ops: readonly [Op, ...Op[]];
  /** Runs where Redis refuses writes (maxmemory reached): FUNCTION flag 'no-writes'. */
  readonly readOnly: boolean;
  /**
   * A call may create the queue's keys: the first such call of a Queue object registers the
   * queue's name (lib/core/registry/registry.ts). Reads, leases and settles never do.
   */
  readonly creates: boolean;
  /** The call's ARGV, in the header's order. */
  readonly encode: (args: Args) => ScriptArg[];
  /** The reply, typed (`args`: the call's, for replies answered per item). */
  readonly decode: (reply: unknown, args: Args) => Result;
}

/**
 * An operation on one queue: its script sees the queue keys (redis/keys.ts), then `extraKeys`
 * more; a call passes the jobs key for the queue keys (QueueKeys.call, redis/keys.lua expandKeys).
 */
export interface QueueScript<Name extends string, Args, Result, Op extends string> extends ScriptDef<Name, Args, Result, Op> {
  readonly extraKeys: number;
  /** The keys after the queue keys (lease and settle: their request's replay record). */
  readonly extraKeysOf?: (keys: QueueKeys, args: Args) => string[];
}

/** An operation on keys of its own, outside every queue's hash tag (the registry). */
export interface OwnKeysScript<Name extends string, Args, Result, Op extends string> extends ScriptDef<Name, Args, Result, Op> {
  readonly ownKeys: number;
}

/** Any definition, as the library (redis/script-code.ts) lists them: its arguments unknown here. */
export type AnyScript = QueueScript<string, never, unknown, string> | OwnKeysScript<string, never, unknown, string>;

interface Flags {
  readOnly?: true;
  creates?: true;
}

/** A queue operation's definition; not read-only, not creating, no extra keys unless said. */
export function queueScript<const Name extends string, Args, Result, const Op extends string>(
  def: Omit<QueueScript<Name, Args, Result, Op>, 'readOnly' | 'creates' | 'extraKeys'> & Flags & { extraKeys?: number },
): QueueScript<Name, Args, Result, Op> {
  return { ...def, readOnly: def.readOnly ?? false, creates: def.creates ?? false, extraKeys: def.extraKeys ?? 0 };
}

/** An own-keys operation's definition. */
export function ownKeysScript<const Name extends string, Args, Result, const Op extends string>(
  def: Omit<OwnKeysScript<Name, Args, Result, Op>, 'readOnly' | 'creates'> & Flags,
): OwnKeysScript<Name, Args, Result, Op> {
  return { ...def, readOnly: def.readOnly ?? false, creates: def.creates ?? false };
}
