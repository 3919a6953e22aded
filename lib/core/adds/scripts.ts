import { itemFlag, type AddReply, type ProduceItem } from '../backpressure/scripts.js';
import { queueScript, type AddFlag, type ScriptArg } from '../redis/script-def.js';
import { PartitionMovedError } from '../partitions/errors.js';

/**
 * Adds jobs on the plain path (add.lua): 1 created / 0 not, per job. Jobs without options go as
 * id and record only; when one has options, all go in full (one form per call keeps their order).
 */
export const addScript = queueScript({
  name: 'add',
  file: 'adds/add.lua',
  ops: ['add', 'addBulk'],
  creates: true,
  encode: (a: { events: AddFlag; jobs: readonly ProduceItem[]; queue: string }) => {
    const argv: ScriptArg[] = [a.events];
    if (a.jobs.every((it) => it.custom === 0 && !it.dedup && it.priority === 0 && it.due === '')) {
      argv.push(0, a.jobs.length);
      for (const it of a.jobs) argv.push(it.id, it.record);
    } else {
      argv.push(a.jobs.length);
      for (const it of a.jobs) argv.push(it.id, itemFlag(it), it.record, it.priority, it.due);
      argv.push(0);
    }
    return argv;
  },
  decode: (reply, a) => {
    if (reply === 'moved') throw new PartitionMovedError(a.queue);
    return reply as AddReply[];
  },
});

/** The job holding a deduplication id, or null (deduplication-job.lua). */
export const deduplicationJobScript = queueScript({
  name: 'deduplicationJob',
  file: 'adds/deduplication-job.lua',
  ops: ['getDeduplicationJobId'],
  readOnly: true,
  encode: (a: { id: string }) => [a.id],
  decode: (reply) => (reply === null ? null : String(reply)),
});

/** Frees a deduplication id: true when a job held it (remove-deduplication.lua). */
export const removeDeduplicationScript = queueScript({
  name: 'removeDeduplication',
  file: 'adds/remove-deduplication.lua',
  ops: ['removeDeduplicationKey'],
  encode: (a: { id: string }) => [a.id],
  decode: (reply) => reply === 1,
});

export const ADD_SCRIPTS = [addScript, deduplicationJobScript, removeDeduplicationScript] as const;
