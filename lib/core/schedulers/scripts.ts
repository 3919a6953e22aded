import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import type { StoredSpec } from './spec.js';
import type { SchedulerJobOptions } from './types.js';

export interface StoredConfig {
  spec: StoredSpec;
  opts: SchedulerJobOptions;
}

/** One scheduler as the read script returns it. */
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

/**
 * Reads schedulers with the Redis clock (scheduler-read.lua): the due ones for a tick (at most
 * `limit`), the clock alone for an upsert, or all of them.
 */
export const schedulerReadScript = queueScript({
  name: 'schedulerRead',
  file: 'schedulers/scheduler-read.lua',
  ops: ['runSchedulers', 'upsertScheduler', 'getSchedulers'],
  readOnly: true,
  encode: (a: { mode: 'due' | 'now' | 'all'; limit: number | '' }) => [a.mode, a.limit],
  decode: (reply): { now: number; earliest: number | null; items: Stored[] } => {
    const r = reply as Array<string | number>;
    const items: Stored[] = [];
    for (let i = 2; i < r.length; i += 3) {
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
    return { now: Number(r[0]), earliest: r[1] === '' ? null : Number(r[1]), items };
  },
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

export const SCHEDULER_SCRIPTS = [schedulerReadScript, schedulerUpsertScript, schedulerAdvanceScript, schedulerRemoveScript] as const;
