import type { ProduceItem } from '../backpressure/scripts.js';
import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';

/**
 * Adds jobs on the plain path (add.lua): 1 created / 0 not, per job. Jobs without options go as
 * id and record only; when one has options, all go in full (one form per call keeps their order).
 */
export const addScript = queueScript({
  name: 'add',
  file: 'adds/add.lua',
  ops: ['add', 'addBulk'],
  creates: true,
  encode: (a: { events: EventsFlag; jobs: readonly ProduceItem[] }) => {
    const argv: ScriptArg[] = [a.events];
    if (a.jobs.every((it) => it.custom === 0 && it.priority === 0 && it.due === '')) {
      argv.push(0, a.jobs.length);
      for (const it of a.jobs) argv.push(it.id, it.record);
    } else {
      argv.push(a.jobs.length);
      for (const it of a.jobs) argv.push(it.id, it.custom, it.record, it.priority, it.due);
      argv.push(0);
    }
    return argv;
  },
  decode: (reply) => reply as number[],
});

export const ADD_SCRIPTS = [addScript] as const;
