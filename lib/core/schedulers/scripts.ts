import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import type { StoredSpec } from './spec.js';
import type { SchedulerJobOptions } from './types.js';

export interface StoredConfig {
  spec: StoredSpec;
  opts: SchedulerJobOptions;
}

/** One scheduler as the read scripts return it. */
export interface Stored {
  id: string;
  config: StoredConfig;
  /** The job record, created at 0: a tick splices its time in. */
  record: string;
  raw: string;
  version: number;
  next: number | null;
  made: number;
}

/** The schedulers in a read script's reply from `from` on (id, config, state each); those gone left out. */
function storedFrom(r: ReadonlyArray<string | number>, from: number): Stored[] {
  const items: Stored[] = [];
  for (let i = from; i < r.length; i += 3) {
    const raw = String(r[i + 1]);
    if (raw === '') continue;
    const [v, next, made] = String(r[i + 2]).split(':');
    const nl = raw.indexOf('\n');
    items.push({
      id: String(r[i]),
      config: JSON.parse(raw.slice(0, nl)) as StoredConfig,
      record: raw.slice(nl + 1),
      raw,
      version: Number(v),
      next: next ? Number(next) : null,
      made: Number(made),
    });
  }
  return items;
}

/**
 * The schedulers due for a tick, at most `limit`, with the Redis time of the read and the
 * earliest next slot still to come (scheduler-due.lua).
 */
export const schedulerDueScript = queueScript({
  name: 'schedulerDue',
  file: 'schedulers/scheduler-due.lua',
  ops: ['runSchedulers'],
  readOnly: true,
  encode: (a: { limit: number }) => [a.limit],
  decode: (reply): { now: number; earliest: number | null; items: Stored[] } => {
    const r = reply as Array<string | number>;
    return { now: Number(r[0]), earliest: r[1] === '' ? null : Number(r[1]), items: storedFrom(r, 2) };
  },
});

/** The Redis clock (ms) for an upsert's first slot (scheduler-now.lua). */
export const schedulerNowScript = queueScript({
  name: 'schedulerNow',
  file: 'schedulers/scheduler-now.lua',
  ops: ['upsertScheduler'],
  readOnly: true,
  encode: () => [],
  decode: (reply) => Number(reply),
});

/** Every scheduler of the queue, in no order (scheduler-list.lua). */
export const schedulerListScript = queueScript({
  name: 'schedulerList',
  file: 'schedulers/scheduler-list.lua',
  ops: ['getSchedulers'],
  readOnly: true,
  encode: () => [],
  decode: (reply) => storedFrom(reply as Array<string | number>, 0),
});

/**
 * Creates or replaces a scheduler (scheduler-upsert.lua): 0 the same config was stored (nothing
 * written), 1 written, 2 written with the first slot's job.
 */
export const schedulerUpsertScript = queueScript({
  name: 'schedulerUpsert',
  file: 'schedulers/scheduler-upsert.lua',
  ops: ['upsertScheduler'],
  creates: true,
  encode: (a: { events: EventsFlag; id: string; config: string; firstSlot: number | null; record: string }) => [
    a.events,
    a.id,
    a.config,
    a.firstSlot === null ? '' : String(a.firstSlot),
    a.record,
  ],
  decode: (reply) => reply as 0 | 1 | 2,
});

/** One due scheduler's move: the slots a tick computed for it, applied if it is still at `version` and `next`. */
export interface SchedulerMove {
  id: string;
  version: number;
  next: number;
  catchUp: number | null;
  newNext: number | null;
  record: string;
}

/** One tick's writes (scheduler-advance.lua): per move, -1 lost the CAS, else bit 1 the catch-up job created, bit 2 the next slot's. */
export const schedulerAdvanceScript = queueScript({
  name: 'schedulerAdvance',
  file: 'schedulers/scheduler-advance.lua',
  ops: ['runSchedulers'],
  encode: (a: { events: EventsFlag; moves: readonly SchedulerMove[] }) => {
    const argv: ScriptArg[] = [a.events, a.moves.length];
    for (const m of a.moves) argv.push(m.id, m.version, String(m.next), m.catchUp ?? '', m.newNext ?? '', m.record);
    return argv;
  },
  decode: (reply) => reply as number[],
});

/** Removes a scheduler (scheduler-remove.lua): false when there was none. */
export const schedulerRemoveScript = queueScript({
  name: 'schedulerRemove',
  file: 'schedulers/scheduler-remove.lua',
  ops: ['removeScheduler'],
  encode: (a: { events: EventsFlag; id: string }) => [a.events, a.id],
  decode: (reply) => reply === 1,
});

export const SCHEDULER_SCRIPTS = [
  schedulerDueScript,
  schedulerNowScript,
  schedulerListScript,
  schedulerUpsertScript,   schedulerAdvanceScript,
  schedulerRemoveScript,
] as const;
