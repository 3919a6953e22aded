import { RelqError } from '../errors.js';

/**
 * @internal A partition refused an add routed with an older map of the queue: a resize moved
 * keys since (partitions/epoch-fence.lua). Nothing was written; the PartitionedQueue reads
 * the map again and routes the jobs anew, so it never reaches the caller.
 */
export class PartitionMovedError extends RelqError {
  constructor(queue: string) {
    super(`queue '${queue}': a partition refused an add routed with an older map of the queue`, 'RELQ_PARTITION_MOVED');
  }
}

/**
 * A PartitionedQueue object declares a number of partitions the queue's map in Redis never
 * held (the first object to use the queue wrote it, resizes added to it): its jobs would go
 * to partitions the others never read. Nothing was written.
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
      `queue '${queue}' has ${stored} partition(s) but this object declares ${declared}, a number it never had: declare the number it has (or had before a resize), and change it with resize() or \`relq resize\` (docs/scale-out.md)`,
      'RELQ_PARTITIONS_MISMATCH',
    );
  }
}
