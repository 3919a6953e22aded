import { RelqError } from '../errors.js';

/**
 * A PartitionedQueue object declares another number of partitions than the queue's map in
 * Redis holds (the first object to use the queue wrote it): its jobs would go to partitions
 * the others never read. Nothing was written.
 */
export class PartitionsMismatchError extends RelqError {
  constructor(
    readonly queue: string,
    /** The number this object declares. */
    readonly declared: number,
    /** The number the queue has. */
    readonly stored: number,
  ) {
    super(
      `queue '${queue}' has ${stored} partition(s) but this object declares ${declared}: every PartitionedQueue of a queue must declare the same number (docs/scale-out.md)`,
      'RELQ_PARTITIONS_MISMATCH',
    );
  }
}
