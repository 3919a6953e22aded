import type { BulkJob, JobOptions } from '../adds/types.js';
import type { QueueOptions } from '../queue/types.js';

/**
 * A partitioned queue's options (docs/scale-out.md): a queue's, less the ones whose limits
 * are queue-wide and not shared between partitions (`bound`, `exclusive`: refused with a
 * ValidationError when given). `globalConcurrency` and `limiter.max` are split into a share per
 * partition (at least one each); retention by count (`defaults.keepCompleted.count`, a job's)
 * too.
 */
export interface PartitionedQueueOptions extends Omit<QueueOptions, 'bound' | 'exclusive'> {
  /** How many partitions, 1 to 1,024; each is a relq queue with a Cluster slot of its own. Every object of the queue declares the same. */
  partitions: number;
}

/** A job's options on a partitioned queue: a queue's, and the key that picks its partition. */
export interface PartitionedJobOptions extends JobOptions {
  /**
   * Jobs with the same key go to the same partition, so their order holds (leased in the
   * order added, as in a plain queue). A job's `group` takes precedence; without either, the
   * `jobId` or the deduplication id decides, else the producer spreads jobs over the partitions.
   */
  partitionKey?: string;
}

/** One job of PartitionedQueue.addBulk(). */
export interface PartitionedBulkJob<Data> extends Omit<BulkJob<Data>, 'opts'> {
  opts?: PartitionedJobOptions;
}

/** What PartitionedQueue.resize() did. */
export interface ResizeResult {
  /** The number of partitions now. */
  partitions: number;
  /** The queue map's epoch after the resize. */
  epoch: number;
  /** The new partitions lease: the handover ended within the call's wait (else sweep() carries it on). */
  handedOver: boolean;
}
