import type { QueueOptions } from '../queue/types.js';

/**
 * @internal The option that makes a Queue object partition `i` of a partitioned queue
 * (partitioned-queue.ts): keyed by a symbol relq does not export, so it is in no type users
 * see and no option list they can pass by mistake.
 */
export const PARTITION = Symbol('relq.partition');

export type PartitionQueueOptions = QueueOptions & { [PARTITION]: number };

/** The partition a Queue object's options make it, undefined for a queue of its own. */
export function partitionOption(options: QueueOptions): number | undefined {
  return (options as Partial<PartitionQueueOptions>)[PARTITION];
}
