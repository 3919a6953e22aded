import type { QueueOptions } from '../queue/types.js';

/**
 * @internal The option that makes a Queue object partition `i` of a partitioned queue
 * (partitioned-queue.ts): keyed by a symbol relq does not export, so it is in no type users
 * see and no option list they can pass by mistake.
 */
export const PARTITION = Symbol('relq.partition');

/**
 * @internal The job option that carries, for a job a partitioned queue routed by its group or
 * partitionKey, that key's bucket into its record (meta bk: what a resize's handover looks
 * for). A symbol, so no option list shows it and no caller passes it by mistake.
 */
export const BUCKET = Symbol('relq.bucket');

/** Partition `index` of `of`. */
export interface PartitionSlot {
  readonly index: number;
  readonly of: number;
}

export type PartitionQueueOptions = QueueOptions & { [PARTITION]: PartitionSlot };

/** The partition a Queue object's options make it, undefined for a queue of its own. */
export function partitionOption(options: QueueOptions): PartitionSlot | undefined {
  return (options as Partial<PartitionQueueOptions>)[PARTITION];
}
