import type { PartitionedQueue } from '../../core/partitions/partitioned-queue.js';
import type { Queue } from '../../core/queue/queue.js';

/**
 * A queue the app registered: a Queue, or a PartitionedQueue (`registerQueue({ partitions })`).
 * Processors, sweepers, schedulers, listeners and the health check run on either. @internal
 */
export type AppQueue = Queue<unknown, unknown> | PartitionedQueue<unknown, unknown>;
